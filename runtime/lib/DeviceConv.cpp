//===- DeviceConv.cpp - A convolution as a cuDNN call ---------------------===//
//
// This file implements planConvolution (DeviceConv.h). The output box's
// rows [o0, o1) need input rows from r0 = stride o0 - padding to rl =
// stride (o1 - 1) - padding + dilation (kH - 1). The view of X starts at
// v0 = max(r0, the box's first row) with pb = v0 - r0 rows of zeros before
// it, and ends at the last needed row the box holds, pa rows short of rl.
// cuDNN pads pb rows on both sides and computes floor((H + 2 pb - dilation
// (kH - 1) - 1) / stride) + 1 rows: exactly o1 - o0 when 0 <= pb - pa <
// stride. Likewise for columns.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Runtime/Box.h"

#include <algorithm>

using namespace tofu::runtime;

namespace {
/// Row-major element strides of a box.
void stridesOf(const BoxView &v, std::int64_t strides[4]) {
  strides[3] = 1;
  for (int d = 2; d >= 0; --d)
    strides[d] = strides[d + 1] * v.extent[d + 1];
}
} // namespace

std::optional<ConvCall> tofu::runtime::planConvolution(const DeviceConv &c,
                                                       const KernelCall &call) {
  const BoxView &x = call.inputs[c.input], &w = call.inputs[c.weight],
                &y = call.output;
  if (c.groups != 1 || x.rank != 4 || w.rank != 4 || y.rank != 4)
    return std::nullopt;
  for (unsigned v = 0; v != 4; ++v)
    if (call.varHi[v] <= call.varLo[v])
      return std::nullopt;
  // The clamped reduction ranges; the kernel window must be whole.
  auto clamp = [&](unsigned v, std::int64_t extent, std::int64_t &lo,
                   std::int64_t &hi) {
    lo = std::max<std::int64_t>(call.varLo[v], 0);
    hi = std::min(call.varHi[v], extent);
    return hi > lo;
  };
  std::int64_t c0, c1, ky0, ky1, kx0, kx1;
  if (!clamp(c.ci, c.weightShape[1], c0, c1) ||
      !clamp(c.ky, c.weightShape[2], ky0, ky1) ||
      !clamp(c.kx, c.weightShape[3], kx0, kx1) || ky0 != 0 || kx0 != 0 ||
      ky1 != c.weightShape[2] || kx1 != c.weightShape[3])
    return std::nullopt;
  // The filter: weight rows [co0, co1) of a box whose other dimensions are
  // exactly [c0, c1) x kH x kW, so that the slice is packed.
  std::int64_t co0 = call.varLo[1], co1 = call.varHi[1];
  if (w.lo[1] != c0 || w.extent[1] != c1 - c0 || w.lo[2] != 0 ||
      w.extent[2] != ky1 || w.lo[3] != 0 || w.extent[3] != kx1 ||
      co0 < w.lo[0] || co1 > w.lo[0] + w.extent[0])
    return std::nullopt;
  ConvCall p;
  std::int64_t ws[4], xs[4], ys[4];
  stridesOf(w, ws);
  stridesOf(x, xs);
  stridesOf(y, ys);
  unsigned size = getElementSize(y.type);
  p.w = static_cast<const char *>(w.data) + (co0 - w.lo[0]) * ws[0] * size;
  p.wDims[0] = co1 - co0;
  p.wDims[1] = c1 - c0;
  p.wDims[2] = ky1;
  p.wDims[3] = kx1;
  // The input: batch elements and channels of the box, the rows and
  // columns computed above.
  std::int64_t n0 = call.varLo[0], n1 = call.varHi[0];
  std::int64_t start[4] = {n0, c0, 0, 0};
  p.xDims[0] = n1 - n0;
  p.xDims[1] = c1 - c0;
  for (unsigned s = 0; s != 2; ++s) {
    unsigned d = s + 2;
    std::int64_t o0 = call.varLo[d], o1 = call.varHi[d];
    std::int64_t r0 = c.stride[s] * o0 - c.padding[s];
    std::int64_t rl = c.stride[s] * (o1 - 1) - c.padding[s] +
                      c.dilation[s] * (c.weightShape[d] - 1);
    std::int64_t v0 = std::max(r0, x.lo[d]);
    std::int64_t last = std::min(rl, x.lo[d] + x.extent[d] - 1);
    std::int64_t pb = v0 - r0, pa = rl - last;
    if (last < v0 || pb - pa < 0 || pb - pa >= c.stride[s])
      return std::nullopt;
    start[d] = v0;
    p.xDims[d] = last - v0 + 1;
    p.pad[s] = pb;
    p.stride[s] = c.stride[s];
    p.dilation[s] = c.dilation[s];
  }
  if (n0 < x.lo[0] || n1 > x.lo[0] + x.extent[0] || c0 < x.lo[1] ||
      c1 > x.lo[1] + x.extent[1])
    return std::nullopt;
  std::int64_t xo = 0, yo = 0;
  for (unsigned d = 0; d != 4; ++d) {
    xo += (start[d] - x.lo[d]) * xs[d];
    yo += (call.varLo[d] - y.lo[d]) * ys[d];
    p.xStrides[d] = xs[d];
    p.yStrides[d] = ys[d];
    p.yDims[d] = call.varHi[d] - call.varLo[d];
  }
  p.x = static_cast<const char *>(x.data) + xo * size;
  p.y = static_cast<char *>(y.data) + yo * size;
  return p;
}
