//===- DevicePooling.cpp - A 2-D pooling as a cuDNN call ------------------===//
//
// This file implements planPooling (DevicePooling.h). The output box's rows
// [o0, o1) read input rows r0 = stride o0 - padding to rl = stride (o1 - 1)
// - padding + window - 1. The view of X is the part of those rows inside X,
// [v0, last]: pb = v0 - r0 rows of padding before it, pa = rl - last after.
// cuDNN pads pb rows on both sides and computes floor((rows + 2 pb -
// window) / stride) + 1 rows: exactly o1 - o0 when 0 <= pb - pa < stride,
// each window at the rows the kernel reads (its padded positions are never
// a maximum). Likewise for columns.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DevicePooling.h"
#include "tofu/Runtime/Box.h"

#include "BoxStrides.h"

#include <algorithm>

using namespace tofu::runtime;

namespace {
/// True if [lo, hi) lies inside dimension d of `v`.
bool holds(const BoxView &v, unsigned d, std::int64_t lo, std::int64_t hi) {
  return lo >= v.lo[d] && hi <= v.lo[d] + v.extent[d];
}
} // namespace

std::optional<PoolingCall> tofu::runtime::planPooling(const DevicePooling &p,
                                                      const KernelCall &call) {
  const BoxView &x = call.inputs[p.input], &y = call.output;
  if (x.rank != 4 || y.rank != 4)
    return std::nullopt;
  for (unsigned v = 0; v != 4; ++v)
    if (call.varHi[v] <= call.varLo[v])
      return std::nullopt;
  // The whole window.
  for (auto [v, extent] : {std::make_pair(p.ky, p.window[0]),
                           std::make_pair(p.kx, p.window[1])})
    if (call.varLo[v] > 0 || call.varHi[v] < extent)
      return std::nullopt;
  PoolingCall c;
  c.mode = p.mode;
  std::int64_t start[4] = {call.varLo[0], call.varLo[1], 0, 0};
  for (unsigned d = 0; d != 2; ++d) {
    c.xDims[d] = call.varHi[d] - call.varLo[d];
    if (!holds(x, d, call.varLo[d], call.varHi[d]))
      return std::nullopt;
  }
  for (unsigned s = 0; s != 2; ++s) {
    unsigned d = s + 2;
    std::int64_t o0 = call.varLo[d], o1 = call.varHi[d];
    std::int64_t r0 = p.stride[s] * o0 - p.padding[s];
    std::int64_t rl = p.stride[s] * (o1 - 1) - p.padding[s] + p.window[s] - 1;
    std::int64_t v0 = std::max<std::int64_t>(r0, 0);
    std::int64_t last = std::min(rl, p.inputShape[d] - 1);
    std::int64_t pb = v0 - r0, pa = rl - last;
    if (last < v0 || pb - pa < 0 || pb - pa >= p.stride[s] ||
        pb >= p.window[s] || !holds(x, d, v0, last + 1) ||
        (p.mode == PoolingMode::Average && (pb || pa)))
      return std::nullopt;
    start[d] = v0;
    c.xDims[d] = last - v0 + 1;
    c.pad[s] = pb;
    c.stride[s] = p.stride[s];
    c.window[s] = p.window[s];
  }
  std::int64_t xs[4], ys[4], xo = 0, yo = 0;
  getStrides4(x, xs);
  getStrides4(y, ys);
  for (unsigned d = 0; d != 4; ++d) {
    xo += (start[d] - x.lo[d]) * xs[d];
    yo += (call.varLo[d] - y.lo[d]) * ys[d];
    c.xStrides[d] = xs[d];
    c.yStrides[d] = ys[d];
    c.yDims[d] = call.varHi[d] - call.varLo[d];
  }
  unsigned size = getElementSize(y.type);
  c.x = static_cast<const char *>(x.data) + xo * size;
  c.y = static_cast<char *>(y.data) + yo * size;
  return c;
}
