//===- CudnnNormPool.h - Batch norms and pooling on cuDNN -------*- C++ -*-===//
//
// This file declares, private to TofuRuntimeCUDA and built only with cuDNN
// (TOFU_HAVE_CUDNN), the cuDNN calls of the planned batch normalizations
// (DeviceBatchNorm.h) and poolings (DevicePooling.h): each creates its
// descriptors, issues one call on the handle's stream and destroys them.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CUDA_CUDNNNORMPOOL_H
#define TOFU_RUNTIME_CUDA_CUDNNNORMPOOL_H

#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Runtime/DevicePooling.h"

#include <cudnn.h>

namespace tofu {
namespace runtime {

/// True if cuDNN accepts `p` (its epsilon is at least CUDNN_BN_MIN_EPSILON).
bool cudnnTakesBatchNorm(const BatchNormCall &p);

/// `p` as one cudnnBatchNormalizationForwardTraining (spatial mode, no
/// running averages, no saved statistics) on f32 or f64 tensors of `type`.
cudnnStatus_t issueBatchNorm(cudnnHandle_t handle, const BatchNormCall &p,
                             ElementType type);

/// `p` as one cudnnPoolingForward (CUDNN_POOLING_MAX propagating NaN, or
/// CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING) on f32 or f64 tensors of
/// `type`.
cudnnStatus_t issuePooling(cudnnHandle_t handle, const PoolingCall &p,
                           ElementType type);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CUDA_CUDNNNORMPOOL_H
