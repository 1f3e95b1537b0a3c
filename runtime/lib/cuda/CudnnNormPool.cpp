//===- CudnnNormPool.cpp - Batch norms and pooling on cuDNN ---------------===//
//
// This file implements the cuDNN calls of CudnnNormPool.h. Tensors are
// described by cudnnSetTensor4dDescriptorEx with the planned dims and
// element strides; scale and bias by cudnnDeriveBNTensorDescriptor (1 x C
// x 1 x 1, float for f32 data, double for f64). alpha = 1 and beta = 0:
// the output is overwritten.
//
//===----------------------------------------------------------------------===//

#include "CudnnNormPool.h"

using namespace tofu::runtime;

namespace {

/// A tensor descriptor destroyed with its scope.
struct TensorDesc {
  cudnnTensorDescriptor_t desc = nullptr;
  cudnnStatus_t status;
  TensorDesc() { status = cudnnCreateTensorDescriptor(&desc); }
  ~TensorDesc() {
    if (desc)
      cudnnDestroyTensorDescriptor(desc);
  }
  cudnnStatus_t set(cudnnDataType_t type, const std::int64_t *dims,
                    const std::int64_t *strides) {
    return cudnnSetTensor4dDescriptorEx(desc, type, int(dims[0]), int(dims[1]),
                                        int(dims[2]), int(dims[3]),
                                        int(strides[0]), int(strides[1]),
                                        int(strides[2]), int(strides[3]));
  }
};

cudnnDataType_t dataType(ElementType type) {
  return type == ElementType::F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

/// The constants 1 and 0 in the scaling type cuDNN expects for `type`.
struct Scaling {
  float onef = 1, zerof = 0;
  double oned = 1, zerod = 0;
  bool f64;
  explicit Scaling(ElementType type) : f64(type == ElementType::F64) {}
  const void *one() const { return f64 ? static_cast<const void *>(&oned) : &onef; }
  const void *zero() const { return f64 ? static_cast<const void *>(&zerod) : &zerof; }
};

} // namespace

bool tofu::runtime::cudnnTakesBatchNorm(const BatchNormCall &p) {
  return p.epsilon >= CUDNN_BN_MIN_EPSILON;
}

cudnnStatus_t tofu::runtime::issueBatchNorm(cudnnHandle_t handle,
                                            const BatchNormCall &p,
                                            ElementType type) {
  TensorDesc x, y, bn;
  for (TensorDesc *d : {&x, &y, &bn})
    if (d->status != CUDNN_STATUS_SUCCESS)
      return d->status;
  cudnnStatus_t status;
  if ((status = x.set(dataType(type), p.dims, p.xStrides)) != CUDNN_STATUS_SUCCESS ||
      (status = y.set(dataType(type), p.dims, p.yStrides)) != CUDNN_STATUS_SUCCESS ||
      (status = cudnnDeriveBNTensorDescriptor(bn.desc, x.desc,
                                              CUDNN_BATCHNORM_SPATIAL)) !=
          CUDNN_STATUS_SUCCESS)
    return status;
  Scaling s(type);
  return cudnnBatchNormalizationForwardTraining(
      handle, CUDNN_BATCHNORM_SPATIAL, s.one(), s.zero(), x.desc, p.x, y.desc,
      p.y, bn.desc, p.scale, p.bias, /*exponentialAverageFactor=*/0,
      /*resultRunningMean=*/nullptr, /*resultRunningVariance=*/nullptr,
      p.epsilon, /*resultSaveMean=*/nullptr, /*resultSaveInvVariance=*/nullptr);
}

cudnnStatus_t tofu::runtime::issuePooling(cudnnHandle_t handle,
                                          const PoolingCall &p,
                                          ElementType type) {
  TensorDesc x, y;
  for (TensorDesc *d : {&x, &y})
    if (d->status != CUDNN_STATUS_SUCCESS)
      return d->status;
  cudnnPoolingDescriptor_t pool;
  cudnnStatus_t status = cudnnCreatePoolingDescriptor(&pool);
  if (status != CUDNN_STATUS_SUCCESS)
    return status;
  cudnnPoolingMode_t mode = p.mode == PoolingMode::Max
                                ? CUDNN_POOLING_MAX
                                : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  Scaling s(type);
  if ((status = x.set(dataType(type), p.xDims, p.xStrides)) == CUDNN_STATUS_SUCCESS &&
      (status = y.set(dataType(type), p.yDims, p.yStrides)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnSetPooling2dDescriptor(
           pool, mode, CUDNN_PROPAGATE_NAN, int(p.window[0]), int(p.window[1]),
           int(p.pad[0]), int(p.pad[1]), int(p.stride[0]), int(p.stride[1]))) ==
          CUDNN_STATUS_SUCCESS)
    status = cudnnPoolingForward(handle, pool, s.one(), x.desc, p.x, s.zero(),
                                 y.desc, p.y);
  cudnnDestroyPoolingDescriptor(pool);
  return status;
}
