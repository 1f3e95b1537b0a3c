//===- IndexedPooling.cpp - Max pooling's indices and gradient as loops ---===//
//
// This file implements runIndexedPooling (IndexedPooling.h): the loops of
// specs/pool.tdl's max_pool2d_with_indices__1 and
// max_pool2d_with_indices_backward that visit only the window positions
// that can contribute, with the generated kernels' arithmetic (double
// accumulation, the same order, the same NaN rule).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/IndexedPooling.h"

#include <algorithm>
#include <limits>

using namespace tofu::runtime;

namespace {
/// Element offsets of a dense row-major rank-4 box.
struct Box4 {
  const std::int64_t *lo;
  std::int64_t stride[4];
  explicit Box4(const BoxView &b) : lo(b.lo) {
    stride[3] = 1;
    for (int d = 2; d >= 0; --d)
      stride[d] = stride[d + 1] * b.extent[d + 1];
  }
  /// The offset of the plane (n, c) at row 0, column 0 (global coordinates;
  /// may lie outside the box when lo[2] or lo[3] > 0).
  std::int64_t plane(std::int64_t n, std::int64_t c) const {
    return (n - lo[0]) * stride[0] + (c - lo[1]) * stride[1] -
           lo[2] * stride[2] - lo[3];
  }
};

/// max_pool2d_with_indices__1: per output element, the smallest flat
/// position (row * W + column) in self's plane whose value equals the
/// window's maximum, or H * W when none does. In the definition the maximum
/// takes padding as the lowest f32 and a NaN sticks, so: a window with a
/// NaN gets H * W, as does a window whose padding exceeds every value
/// inside (all -inf); otherwise the first position (window order, which is
/// increasing flat position) of the largest value inside.
void indices(const IndexedPooling &p, const KernelCall &call) {
  const std::int64_t *lo = call.varLo, *hi = call.varHi;
  const std::int64_t H = p.inputShape[2], W = p.inputShape[3];
  const float *x = static_cast<const float *>(call.inputs[0].data);
  auto *out = static_cast<std::int64_t *>(call.output.data);
  Box4 xb(call.inputs[0]), ob(call.output);
  const float lowest = std::numeric_limits<float>::lowest();
  const std::int64_t spanY = (p.window[0] - 1) * p.dilation[0],
                     spanX = (p.window[1] - 1) * p.dilation[1],
                     dy = p.dilation[0] * xb.stride[2];
  std::vector<float> rowBest(hi[3] - lo[3]);
  std::vector<std::int64_t> rowFound(hi[3] - lo[3]);
  std::vector<std::uint8_t> rowNan(hi[3] - lo[3]);
  for (std::int64_t n = lo[0]; n < hi[0]; ++n)
    for (std::int64_t c = lo[1]; c < hi[1]; ++c) {
      const float *xp = x + xb.plane(n, c);
      std::int64_t *op = out + ob.plane(n, c);
      for (std::int64_t y = lo[2]; y < hi[2]; ++y) {
        const std::int64_t row0 = y * p.stride[0] - p.padding[0];
        // Windows without padding, a row at a time: the first position
        // starts each window's search and later ones replace it only when
        // larger (selects; the row's windows are independent).
        std::int64_t in0 = hi[3], in1 = hi[3];
        if (row0 >= 0 && row0 + spanY < H) {
          in0 = std::max(lo[3], (p.padding[1] + p.stride[1] - 1) / p.stride[1]);
          in1 = std::max(in0, std::min(hi[3], (W - 1 - spanX + p.padding[1]) /
                                                      p.stride[1] + 1));
          const std::int64_t m = in1 - in0;
          const float *xr = xp + row0 * xb.stride[2] +
                            (in0 * p.stride[1] - p.padding[1]);
          for (std::int64_t j = 0; j < m; ++j)
            rowBest[j] = xr[j * p.stride[1]], rowFound[j] = row0 * W,
            rowNan[j] = rowBest[j] != rowBest[j];
          for (std::int64_t ky = 0; ky < p.window[0]; ++ky)
            for (std::int64_t kx = 0; kx < p.window[1]; ++kx) {
              const float *xk = xr + ky * dy + kx * p.dilation[1];
              const std::int64_t at =
                  (row0 + ky * p.dilation[0]) * W + kx * p.dilation[1];
              for (std::int64_t j = 0; j < m; ++j) {
                float v = xk[j * p.stride[1]];
                rowNan[j] |= v != v;
                // Masks, not branches: which window wins is data.
                std::int64_t larger = -std::int64_t(v > rowBest[j]);
                rowBest[j] = std::max(rowBest[j], v);
                rowFound[j] = (at & larger) | (rowFound[j] & ~larger);
              }
            }
          // rowFound lacks the window's first column.
          std::int64_t *o = op + y * ob.stride[2];
          for (std::int64_t j = 0; j < m; ++j)
            o[in0 + j] = rowNan[j] ? H * W
                                   : rowFound[j] + (in0 + j) * p.stride[1] -
                                         p.padding[1];
        }
        for (std::int64_t xo = lo[3]; xo < hi[3]; ++xo) {
          if (xo == in0)
            xo = in1;
          if (xo >= hi[3])
            break;
          const std::int64_t col0 = xo * p.stride[1] - p.padding[1];
          bool padded = false, nan = false;
          float best = 0;
          std::int64_t found = -1;
          for (std::int64_t ky = 0; ky < p.window[0]; ++ky) {
            std::int64_t row = row0 + ky * p.dilation[0];
            if (row < 0 || row >= H) {
              padded = true;
              continue;
            }
            const float *xr = xp + row * xb.stride[2];
            for (std::int64_t kx = 0; kx < p.window[1]; ++kx) {
              std::int64_t col = col0 + kx * p.dilation[1];
              if (col < 0 || col >= W) {
                padded = true;
                continue;
              }
              float v = xr[col];
              nan |= v != v;
              if (found < 0 || v > best)
                best = v, found = row * W + col;
            }
          }
          if (nan || found < 0 || (padded && best < lowest))
            found = H * W;
          op[y * ob.stride[2] + xo] = found;
        }
      }
    }
}

/// floor(a / b) for b > 0.
std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// The pooled coordinates [first, last] along `axis` whose windows reach
/// input coordinates [lo, hi) (clipped to the pooled extent).
void windowRange(std::int64_t lo, std::int64_t hi, int axis,
                 const IndexedPooling &p, std::int64_t &first,
                 std::int64_t &last) {
  std::int64_t span = (p.window[axis] - 1) * p.dilation[axis];
  first = std::max<std::int64_t>(
      0, floorDiv(lo + p.padding[axis] - span + p.stride[axis] - 1,
                  p.stride[axis]));
  last = std::min<std::int64_t>(p.pooledShape[2 + axis] - 1,
                                floorDiv(hi - 1 + p.padding[axis],
                                         p.stride[axis]));
}

/// Whether input coordinate h is a position of window o along `axis`.
bool inWindow(std::int64_t h, std::int64_t o, int axis,
              const IndexedPooling &p) {
  std::int64_t t = h + p.padding[axis] - o * p.stride[axis];
  return t >= 0 && t % p.dilation[axis] == 0 &&
         t / p.dilation[axis] < p.window[axis];
}

/// max_pool2d_with_indices_backward: per input element, the sum (in
/// double) of the gradients of the windows reaching it whose index names
/// it, added in the definition's order (window position ky, kx ascending:
/// pooled coordinates descending). The definition adds 0 for the other
/// windows, which changes no sum (a sum from +0 is never -0). Computed as
/// a scatter: each window reaching the box adds its gradient at its index
/// in a double copy of the box's plane.
void backward(const IndexedPooling &p, const KernelCall &call) {
  const std::int64_t *lo = call.varLo, *hi = call.varHi;
  const std::int64_t W = p.inputShape[3];
  const float *g = static_cast<const float *>(call.inputs[0].data);
  const auto *ind = static_cast<const std::int64_t *>(call.inputs[2].data);
  float *out = static_cast<float *>(call.output.data);
  Box4 gb(call.inputs[0]), ib(call.inputs[2]), ob(call.output);
  std::int64_t oy0, oy1, ox0, ox1;
  windowRange(lo[2], hi[2], 0, p, oy0, oy1);
  windowRange(lo[3], hi[3], 1, p, ox0, ox1);
  const std::int64_t rows = hi[2] - lo[2], cols = hi[3] - lo[3];
  std::vector<double> sums(rows * cols);
  const double invW = 1.0 / double(W);
  for (std::int64_t n = lo[0]; n < hi[0]; ++n)
    for (std::int64_t c = lo[1]; c < hi[1]; ++c) {
      const float *gp = g + gb.plane(n, c);
      const std::int64_t *ip = ind + ib.plane(n, c);
      float *op = out + ob.plane(n, c);
      std::fill(sums.begin(), sums.end(), 0.0);
      for (std::int64_t oy = oy1; oy >= oy0; --oy) {
        const std::int64_t *ir = ip + oy * ib.stride[2];
        const float *gr = gp + oy * gb.stride[2];
        for (std::int64_t ox = ox1; ox >= ox0; --ox) {
          std::int64_t i = ir[ox];
          if (i < 0)
            continue;
          // i / W without a division: W < 2^53, so the product is
          // within one of the quotient.
          std::int64_t h = std::int64_t(double(i) * invW);
          h -= h * W > i;
          h += (h + 1) * W <= i;
          std::int64_t w = i - h * W;
          if (h >= lo[2] && h < hi[2] && w >= lo[3] && w < hi[3] &&
              inWindow(h, oy, 0, p) && inWindow(w, ox, 1, p))
            sums[(h - lo[2]) * cols + (w - lo[3])] += double(gr[ox]);
        }
      }
      for (std::int64_t h = lo[2]; h < hi[2]; ++h)
        for (std::int64_t w = lo[3]; w < hi[3]; ++w)
          op[h * ob.stride[2] + w] =
              float(sums[(h - lo[2]) * cols + (w - lo[3])]);
    }
}
} // namespace

bool tofu::runtime::runIndexedPooling(const IndexedPooling &p,
                                      const KernelCall &call) {
  bool indicesOp = p.kind == IndexedPoolingKind::Indices;
  if (call.numInputs != (indicesOp ? 1u : 3u) ||
      call.inputs[0].type != ElementType::F32 ||
      call.output.type != (indicesOp ? ElementType::I64 : ElementType::F32) ||
      (!indicesOp && call.inputs[2].type != ElementType::I64))
    return false;
  for (std::size_t v = 0; v != p.windowAxes.size(); ++v)
    if (call.varLo[4 + v] > 0 || call.varHi[4 + v] < p.window[p.windowAxes[v]])
      return false;
  for (int d = 0; d != 4; ++d)
    if (call.varLo[d] >= call.varHi[d])
      return true;
  if (indicesOp)
    indices(p, call);
  else
    backward(p, call);
  return true;
}
