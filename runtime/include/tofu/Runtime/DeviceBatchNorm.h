//===- DeviceBatchNorm.h - A batch norm as a cuDNN call ---------*- C++ -*-===//
//
// This file declares how the device executor computes a kernel the
// generator recognised as a training-mode batch normalization's output
// (lib/CodeGen/BatchNorm.cpp, native_batch_norm__0): the description the
// generator derives (DeviceBatchNorm: the tensors, epsilon, the input's
// shape) and the pure host function turning it and a KernelCall into one
// cudnnBatchNormalizationForwardTraining in spatial mode on the call's
// boxes (planBatchNorm), with cuDNN's semantics: per channel, the mean and
// the biased variance over (N, H, W), y = (x - mean) / sqrt(var + eps) *
// scale + bias. No CUDA here; the unit tests run the call with loops on the
// host against the generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEBATCHNORM_H
#define TOFU_RUNTIME_DEVICEBATCHNORM_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tofu {
namespace runtime {

/// out[n, c, y, x] = (X[n, c, y, x] - mean_c) / sqrt(var_c + epsilon) *
/// W[c] + B[c], mean_c and the biased var_c over X[:, c, :, :]; X is input
/// `input` of shape `shape` (an [N, C] input has H = W = 1), W input
/// `weight`, B input `bias`. The output variables are (n, c, y, x) (or
/// (n, c)) in KernelCall order; every other variable is one of the
/// statistics' reduction variables, of extent `varExtents[v]`.
struct DeviceBatchNorm {
  unsigned input = 0, weight = 1, bias = 2;
  unsigned rank = 4;
  double epsilon = 0;
  std::int64_t shape[4] = {1, 1, 1, 1};
  std::vector<std::int64_t> varExtents;
};

/// One cudnnBatchNormalizationForwardTraining (spatial): y = the batch
/// norm of x over NCHW views (dims and element strides) of the boxes,
/// `scale` and `bias` the channels' dims[1] values. No running averages
/// and no saved statistics are written.
struct BatchNormCall {
  const void *x = nullptr, *scale = nullptr, *bias = nullptr;
  void *y = nullptr;
  std::int64_t dims[4] = {}, xStrides[4] = {}, yStrides[4] = {};
  double epsilon = 0;
};

/// The cuDNN call computing `b` over `call`'s iteration box, or none when
/// the box is not one cuDNN problem: the box must cover the whole (N, H,
/// W) of its channels and every reduction variable its whole range (a
/// `reduce` share computes partial statistics cuDNN cannot give); the
/// device then launches the generated kernel. An empty box also gives none.
std::optional<BatchNormCall> planBatchNorm(const DeviceBatchNorm &b,
                                           const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEBATCHNORM_H
