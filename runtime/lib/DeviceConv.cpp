//===- DeviceConv.cpp - A convolution as a cuDNN call ---------------------===//
//
// This file implements planConvolution (DeviceConv.h). Each spatial
// dimension is planned on its own, as a window: which rows of the strided
// operand the call's rows need, and the padding that makes cuDNN's row
// count come out exactly.
//
// Forward (and BackwardFilter, whose dY rows are the forward's output
// rows): output rows [o0, o1) read X rows r0 = s o0 - p to rl = s (o1 - 1)
// - p + d (K - 1). The view of X starts at v0 = max(r0, 0) with pb = v0 -
// r0 rows of zeros before it, and ends at the last row of X needed, pa
// rows short of rl. cuDNN pads pb rows on both sides and computes floor((H
// + 2 pb - d (K - 1) - 1) / s) + 1 rows: exactly o1 - o0 when 0 <= pb - pa
// < s.
//
// BackwardData: dX rows [h0, h1) receive from the dY rows [L, U) (those
// with s y - p + d r in [h0, h1) for some r, within dY). A view of dY rows
// [a, e) with padding p' = p + h0 - s a maps dY row y to dX row s (y - a) -
// p' + d r = s y - p + d r - h0, as wanted; cuDNN requires e - a = floor((h1
// - h0 + 2 p' - d (K - 1) - 1) / s) + 1, i.e. e = C - a for a constant C.
// The plan takes the largest a <= L with p' >= 0 whose e covers U and stays
// within dY (rows of [a, e) outside [L, U) land outside [h0, h1) and are
// dropped by cuDNN).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Runtime/Box.h"

#include "BoxStrides.h"

#include <algorithm>

using namespace tofu::runtime;

namespace {
/// True if [lo, hi) is non-empty and inside dimension `d` of `v`.
bool holds(const BoxView &v, unsigned d, std::int64_t lo, std::int64_t hi) {
  return hi > lo && lo >= v.lo[d] && hi <= v.lo[d] + v.extent[d];
}

/// The NCHW view of `v` from `start` with `dims`: its strides into
/// `strides` and its first element; null if it does not lie inside `v`.
void *viewOf(const BoxView &v, const std::int64_t start[4],
             const std::int64_t dims[4], std::int64_t strides[4]) {
  std::int64_t offset = 0;
  getStrides4(v, strides);
  for (unsigned d = 0; d != 4; ++d) {
    if (!holds(v, d, start[d], start[d] + dims[d]))
      return nullptr;
    offset += (start[d] - v.lo[d]) * strides[d];
  }
  return static_cast<char *>(v.data) + offset * getElementSize(v.type);
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/// The rows of a strided operand one spatial dimension of a call uses:
/// `count` rows from `first`, padded by `pad` on both sides.
struct Window {
  std::int64_t first, count, pad;
};

/// The X rows the output rows [o0, o1) read (stride s, padding p,
/// dilation d, K kernel rows, X of `extent` rows).
std::optional<Window> forwardWindow(std::int64_t o0, std::int64_t o1,
                                    std::int64_t s, std::int64_t p,
                                    std::int64_t d, std::int64_t k,
                                    std::int64_t extent) {
  std::int64_t r0 = s * o0 - p, rl = s * (o1 - 1) - p + d * (k - 1);
  std::int64_t v0 = std::max<std::int64_t>(r0, 0);
  std::int64_t last = std::min(rl, extent - 1);
  std::int64_t pb = v0 - r0, pa = rl - last;
  if (o1 <= o0 || last < v0 || pb - pa < 0 || pb - pa >= s)
    return std::nullopt;
  return Window{v0, last - v0 + 1, pb};
}

/// The dY rows (of `extent`) the dX rows [h0, h1) receive from.
std::optional<Window> dataWindow(std::int64_t h0, std::int64_t h1,
                                 std::int64_t s, std::int64_t p,
                                 std::int64_t d, std::int64_t k,
                                 std::int64_t extent) {
  std::int64_t first = std::max<std::int64_t>(
      0, -floorDiv(-(h0 + p - d * (k - 1)), s));
  std::int64_t end = std::min(extent, floorDiv(h1 - 1 + p, s) + 1);
  if (h1 <= h0 || end <= first)
    return std::nullopt;
  std::int64_t c = floorDiv(h1 + h0 + 2 * p - d * (k - 1) - 1, s) + 1;
  for (std::int64_t a = std::min(first, floorDiv(h0 + p, s)); a >= 0; --a) {
    std::int64_t e = c - a;
    if (e > extent)
      break;
    if (e >= end)
      return Window{a, e - a, p + h0 - s * a};
  }
  return std::nullopt;
}

/// The range [lo, hi) of variable `v` clamped to [0, extent); false if
/// empty.
bool clampedRange(const KernelCall &call, unsigned v, std::int64_t extent,
                  std::int64_t &lo, std::int64_t &hi) {
  lo = std::max<std::int64_t>(call.varLo[v], 0);
  hi = std::min(call.varHi[v], extent);
  return hi > lo;
}
} // namespace

std::optional<ConvCall> tofu::runtime::planConvolution(const DeviceConv &c,
                                                       const KernelCall &call) {
  const BoxView &in = call.inputs[c.input], &other = call.inputs[c.weight],
                &out = call.output;
  if (c.groups != 1 || in.rank != 4 || other.rank != 4 || out.rank != 4)
    return std::nullopt;
  // Every variable's clamped range: output variables 0-3, then the three
  // reduction variables, whose extents are C, R, S (forward: W's last
  // three), K, R, S (backward data) or N, P, Q (backward filter: dY's).
  std::int64_t lo[7], hi[7];
  for (unsigned v = 0; v != 4; ++v)
    if (!clampedRange(call, v, c.outputShape[v], lo[v], hi[v]))
      return std::nullopt;
  std::int64_t extents[3] = {
      c.weightShape[c.kind == ConvKind::Forward ? 1 : 0], c.weightShape[2],
      c.weightShape[3]};
  for (unsigned i = 0; i != 3; ++i)
    if (!clampedRange(call, c.reduceVars[i], extents[i], lo[4 + i], hi[4 + i]))
      return std::nullopt;

  // The roles of the variables (indices into lo, hi): batch, Y's channels
  // k, X's channels c, the kernel window (r, s), and the rows and columns
  // given by the call (Y's, or dX's for BackwardData); and of the boxes.
  unsigned n = 0, k = 1, ch = 4, window = 5, given = 2;
  const BoxView *x = &in, *y = &out, *w = &other;
  const std::int64_t *kernel = c.weightShape + 2;
  if (c.kind == ConvKind::BackwardData) {
    k = 4, ch = 1;
    x = &out, y = &in;
  } else if (c.kind == ConvKind::BackwardFilter) {
    n = 4, k = 0, ch = 1, window = 2, given = 5;
    y = &other, w = &out;
    kernel = c.outputShape + 2;
  }
  for (unsigned s = 0; s != 2; ++s)
    if (lo[window + s] != 0 || hi[window + s] != kernel[s])
      return std::nullopt;
  ConvCall p;
  p.kind = c.kind;
  std::int64_t xStart[4] = {lo[n], lo[ch]}, yStart[4] = {lo[n], lo[k]};
  std::int64_t xDims[4] = {hi[n] - lo[n], hi[ch] - lo[ch]},
               yDims[4] = {hi[n] - lo[n], hi[k] - lo[k]};
  std::int64_t wStart[4] = {lo[k], lo[ch], 0, 0};
  p.wDims[0] = hi[k] - lo[k];
  p.wDims[1] = hi[ch] - lo[ch];
  // The spatial windows: the strided operand's rows (X's, or dY's for
  // BackwardData) for the given ones.
  bool data = c.kind == ConvKind::BackwardData;
  for (unsigned s = 0; s != 2; ++s) {
    std::int64_t g0 = lo[given + s], g1 = hi[given + s];
    std::optional<Window> win =
        (data ? dataWindow : forwardWindow)(g0, g1, c.stride[s], c.padding[s],
                                            c.dilation[s], kernel[s],
                                            c.inputShape[s + 2]);
    if (!win)
      return std::nullopt;
    std::int64_t *givenStart = data ? xStart : yStart,
                 *givenDims = data ? xDims : yDims;
    std::int64_t *winStart = data ? yStart : xStart,
                 *winDims = data ? yDims : xDims;
    givenStart[s + 2] = g0;
    givenDims[s + 2] = g1 - g0;
    winStart[s + 2] = win->first;
    winDims[s + 2] = win->count;
    p.pad[s] = win->pad;
    p.wDims[s + 2] = kernel[s];
    p.stride[s] = c.stride[s];
    p.dilation[s] = c.dilation[s];
  }
  // The filter is a packed slice: its box holds exactly the channels and
  // the whole kernel window, so its rows [k0, k1) are contiguous.
  if (w->lo[1] != wStart[1] || w->extent[1] != p.wDims[1] || w->lo[2] != 0 ||
      w->extent[2] != p.wDims[2] || w->lo[3] != 0 ||
      w->extent[3] != p.wDims[3])
    return std::nullopt;
  std::int64_t wStrides[4];
  p.w = viewOf(*w, wStart, p.wDims, wStrides);
  p.x = viewOf(*x, xStart, xDims, p.xStrides);
  p.y = viewOf(*y, yStart, yDims, p.yStrides);
  if (!p.w || !p.x || !p.y)
    return std::nullopt;
  std::copy(xDims, xDims + 4, p.xDims);
  std::copy(yDims, yDims + 4, p.yDims);
  return p;
}
