//===- DeviceBatchNorm.cpp - A batch norm as a cuDNN call -----------------===//
//
// This file implements planBatchNorm (DeviceBatchNorm.h): the channels
// [c0, c1) of the box become a [N, c1 - c0, H, W] problem over views of
// the input and output boxes at (0, c0, 0, 0), with the scale and bias
// boxes offset to c0.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Runtime/Box.h"

#include <algorithm>

using namespace tofu::runtime;

namespace {
/// The element offset of (0, c, 0, 0) in `v` and its NCHW strides (an
/// [N, C] box as [N, C, 1, 1]); false if `v` does not hold [0, extent) of
/// every dimension but the channel's, or the channels [c0, c1).
bool viewOf(const BoxView &v, const std::int64_t shape[4], std::int64_t c0,
            std::int64_t c1, std::int64_t &offset, std::int64_t strides[4]) {
  std::int64_t lo[4] = {0, 0, 0, 0}, extent[4] = {1, 1, 1, 1};
  for (unsigned d = 0; d != v.rank; ++d) {
    lo[d] = v.lo[d];
    extent[d] = v.extent[d];
  }
  for (unsigned d : {0u, 2u, 3u})
    if (lo[d] > 0 || lo[d] + extent[d] < shape[d])
      return false;
  if (c0 < lo[1] || c1 > lo[1] + extent[1])
    return false;
  strides[3] = 1;
  for (int d = 2; d >= 0; --d)
    strides[d] = strides[d + 1] * extent[d + 1];
  offset = 0;
  std::int64_t start[4] = {0, c0, 0, 0};
  for (unsigned d = 0; d != 4; ++d)
    offset += (start[d] - lo[d]) * strides[d];
  return true;
}

/// The element offset of channel c0 in a one-dimensional box holding
/// channels [c0, c1); false if it does not.
bool channelOf(const BoxView &v, std::int64_t c0, std::int64_t c1,
               std::int64_t &offset) {
  if (v.rank != 1 || c0 < v.lo[0] || c1 > v.lo[0] + v.extent[0])
    return false;
  offset = c0 - v.lo[0];
  return true;
}
} // namespace

std::optional<BatchNormCall> tofu::runtime::planBatchNorm(const DeviceBatchNorm &b,
                                                          const KernelCall &call) {
  const BoxView &x = call.inputs[b.input], &y = call.output;
  if (x.rank != b.rank || y.rank != b.rank)
    return std::nullopt;
  // The whole (N, H, W) of channels [c0, c1), every statistic whole.
  std::int64_t c0 = call.varLo[1], c1 = call.varHi[1];
  if (c1 <= c0)
    return std::nullopt;
  for (unsigned v = 0; v != b.rank; ++v)
    if (v != 1 && (call.varLo[v] != 0 || call.varHi[v] != b.shape[v]))
      return std::nullopt;
  for (unsigned v = b.rank; v < b.varExtents.size(); ++v)
    if (call.varLo[v] > 0 || call.varHi[v] < b.varExtents[v])
      return std::nullopt;
  BatchNormCall p;
  std::int64_t xo, yo, so, bo;
  if (!viewOf(x, b.shape, c0, c1, xo, p.xStrides) ||
      !viewOf(y, b.shape, c0, c1, yo, p.yStrides) ||
      !channelOf(call.inputs[b.weight], c0, c1, so) ||
      !channelOf(call.inputs[b.bias], c0, c1, bo))
    return std::nullopt;
  unsigned size = getElementSize(y.type);
  p.x = static_cast<const char *>(x.data) + xo * size;
  p.y = static_cast<char *>(y.data) + yo * size;
  p.scale = static_cast<const char *>(call.inputs[b.weight].data) + so * size;
  p.bias = static_cast<const char *>(call.inputs[b.bias].data) + bo * size;
  for (unsigned d = 0; d != 4; ++d)
    p.dims[d] = b.shape[d];
  p.dims[1] = c1 - c0;
  p.epsilon = b.epsilon;
  return p;
}
