//===- DeviceConv.h - A convolution as a cuDNN call -------------*- C++ -*-===//
//
// This file declares how the device executor computes a kernel the
// generator marked as a forward 2-D convolution (lib/CodeGen/Convolution.cpp,
// the C++ target's im2col routing): the description the generator derives
// (DeviceConv: stride, padding, dilation, groups, shapes) and the pure host
// function turning it and a KernelCall into one cudnnConvolutionForward on
// the call's boxes (planConvolution), with cuDNN's semantics: NCHW tensors
// with explicit strides, a packed KCRS filter, cross-correlation, the same
// zero padding before and after. No CUDA here; the unit tests run the call
// with loops on the host against the generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICECONV_H
#define TOFU_RUNTIME_DEVICECONV_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <optional>

namespace tofu {
namespace runtime {

/// out[n, co, y, x] = Sum_{ci, ky, kx} W[co, ci, ky, kx] *
///   X[n, ci, stride[0] y - padding[0] + dilation[0] ky,
///            stride[1] x - padding[1] + dilation[1] kx]
/// (zero outside X), the output variables (n, co, y, x) in KernelCall
/// order 0-3 and ci, ky, kx variables `ci`, `ky`, `kx`; X is input
/// `input` of shape `inputShape`, W input `weight` of `weightShape`.
struct DeviceConv {
  unsigned input = 0, weight = 1;
  unsigned ci = 4, ky = 5, kx = 6;
  std::int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  std::int64_t groups = 1;
  std::int64_t inputShape[4] = {}, weightShape[4] = {}, outputShape[4] = {};
};

/// One cudnnConvolutionForward: y = conv(x, w) with cuDNN's semantics over
/// NCHW views (dims and element strides) of the boxes, a packed filter of
/// `wDims`, symmetric zero padding `pad`.
struct ConvCall {
  const void *x = nullptr, *w = nullptr;
  void *y = nullptr;
  std::int64_t xDims[4] = {}, xStrides[4] = {}, wDims[4] = {},
               yDims[4] = {}, yStrides[4] = {};
  std::int64_t pad[2] = {}, stride[2] = {}, dilation[2] = {};
};

/// The cuDNN call computing `c` over `call`'s iteration box, or none when
/// the box's problem is not one cuDNN convolution (a partial kernel
/// window, a weight box that is not a packed slice, padding that would
/// differ before and after); the device then launches the generated
/// kernel. An empty box also gives none (there is nothing to compute).
std::optional<ConvCall> planConvolution(const DeviceConv &c,
                                        const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICECONV_H
