//===- DeviceConv.h - A convolution as a cuDNN call -------------*- C++ -*-===//
//
// This file declares how the device executor computes a kernel the
// generator marked as a 2-D convolution or one of its gradients
// (lib/CodeGen/Convolution.cpp, the C++ target's im2col routing): the
// description the generator derives (DeviceConv: which of the three
// problems, stride, padding, dilation, groups, shapes) and the pure host
// function turning it and a KernelCall into one cuDNN call on the call's
// boxes (planConvolution): cudnnConvolutionForward, BackwardData or
// BackwardFilter, with cuDNN's semantics: NCHW tensors with explicit
// strides, a packed KCRS filter, cross-correlation, the same zero padding
// before and after. No CUDA here; the unit tests run the call with loops
// on the host against the generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICECONV_H
#define TOFU_RUNTIME_DEVICECONV_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <optional>

namespace tofu {
namespace runtime {

/// Which convolution problem a kernel is. With X the convolution's input
/// [N, C, H, W], W its weight [K, C, R, S], Y (or its gradient dY) its
/// output [N, K, P, Q] and row map h(y, r) = stride[0] y - padding[0] +
/// dilation[0] r (likewise for columns; reads outside X are zero):
enum class ConvKind {
  /// Y[n, k, y, x] = Sum_{c, r, s} W[k, c, r, s] X[n, c, h(y, r), w(x, s)].
  Forward,
  /// dX[n, c, h, w] = Sum_{k, r, s} of dY[n, k, y, x] W[k, c, r, s] over
  /// the (y, x) with h(y, r) = h, w(x, s) = w.
  BackwardData,
  /// dW[k, c, r, s] = Sum_{n, y, x} dY[n, k, y, x] X[n, c, h(y, r), w(x, s)].
  BackwardFilter,
};

/// A convolution kernel: its output variables are KernelCall variables
/// 0-3 in the output's dimension order (n, k, y, x for Forward; n, c, h, w
/// for BackwardData; k, c, r, s for BackwardFilter), and `reduceVars` its
/// three reduction variables (c, r, s; k, r, s; n, y, x). `input` is the
/// kernel input read through the strided window (X; dY; X) and `weight`
/// the other one (W; W; dY); the shapes are the whole tensors'.
struct DeviceConv {
  ConvKind kind = ConvKind::Forward;
  unsigned input = 0, weight = 1;
  unsigned reduceVars[3] = {4, 5, 6};
  std::int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  std::int64_t groups = 1;
  std::int64_t inputShape[4] = {}, weightShape[4] = {}, outputShape[4] = {};
};

/// One cuDNN convolution call over NCHW views (dims and element strides)
/// of the boxes: Forward computes y from x and w, BackwardData x from y
/// and w, BackwardFilter w from x and y (each overwriting its result, beta
/// 0; the other two are only read). The filter w is packed `wDims`;
/// padding `pad` is symmetric.
struct ConvCall {
  ConvKind kind = ConvKind::Forward;
  void *x = nullptr, *w = nullptr, *y = nullptr;
  std::int64_t xDims[4] = {}, xStrides[4] = {}, wDims[4] = {},
               yDims[4] = {}, yStrides[4] = {};
  std::int64_t pad[2] = {}, stride[2] = {}, dilation[2] = {};
};

/// The cuDNN call computing `c` over `call`'s iteration box, or none when
/// the box's problem is not one cuDNN convolution (a partial kernel
/// window, a filter box that is not a packed slice, padding that would
/// differ before and after, rows cuDNN would need beyond the boxes); the
/// device then launches the generated kernel. An empty box also gives
/// none (there is nothing to compute).
std::optional<ConvCall> planConvolution(const DeviceConv &c,
                                        const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICECONV_H
