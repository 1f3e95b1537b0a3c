//===- DevicePooling.h - A 2-D pooling as a cuDNN call ----------*- C++ -*-===//
//
// This file declares how the device executor computes a kernel the
// generator recognised as a forward 2-D max or average pooling
// (lib/CodeGen/Pooling.cpp: max_pool2d_with_indices__0, the unpadded
// avg_pool2d, _adaptive_avg_pool2d with divisible sizes): the description
// the generator derives (DevicePooling: mode, window, stride, padding,
// shapes) and the pure host function turning it and a KernelCall into one
// cudnnPoolingForward on the call's boxes (planPooling), with cuDNN's
// semantics: NCHW tensors with explicit strides, the same padding before
// and after, a max that never selects a padded position, an average over
// the whole window. No CUDA here; the unit tests run the call with loops
// on the host against the generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEPOOLING_H
#define TOFU_RUNTIME_DEVICEPOOLING_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <optional>

namespace tofu {
namespace runtime {

/// What a pooling window computes.
enum class PoolingMode : std::uint8_t {
  /// The window's maximum over the positions inside X (NaN propagates).
  Max,
  /// The window's sum divided by its size (no window reaches padding).
  Average,
};

/// out[n, c, y, x] = the `mode` of X[n, c, stride[0] y - padding[0] + ky,
/// stride[1] x - padding[1] + kx] over ky < window[0], kx < window[1]; the
/// output variables (n, c, y, x) in KernelCall order 0-3, ky and kx
/// variables `ky`, `kx`; X is input `input` of shape `inputShape`.
struct DevicePooling {
  PoolingMode mode = PoolingMode::Max;
  unsigned input = 0;
  unsigned ky = 4, kx = 5;
  std::int64_t window[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0};
  std::int64_t inputShape[4] = {}, outputShape[4] = {};
};

/// One cudnnPoolingForward: y = pool(x) with cuDNN's semantics over NCHW
/// views (dims and element strides) of the boxes, symmetric padding `pad`.
struct PoolingCall {
  PoolingMode mode = PoolingMode::Max;
  const void *x = nullptr;
  void *y = nullptr;
  std::int64_t xDims[4] = {}, xStrides[4] = {}, yDims[4] = {}, yStrides[4] = {};
  std::int64_t window[2] = {}, pad[2] = {}, stride[2] = {};
};

/// The cuDNN call computing `p` over `call`'s iteration box, or none when
/// the box's problem is not one cuDNN pooling (a partial window, padding
/// that would differ before and after); the device then launches the
/// generated kernel. An empty box also gives none.
std::optional<PoolingCall> planPooling(const DevicePooling &p,
                                       const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEPOOLING_H
