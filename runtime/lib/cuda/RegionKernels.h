//===- RegionKernels.h - Box copies and reductions on a GPU -----*- C++ -*-===//
//
// This file declares the launch functions of the CUDA device's copy and
// reduction kernels (RegionKernels.cu, compiled by nvcc).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CUDA_REGIONKERNELS_H
#define TOFU_RUNTIME_CUDA_REGIONKERNELS_H

#include "tofu/Runtime/RegionCopy.h"

#include <cuda_runtime_api.h>

namespace tofu {
namespace runtime {

/// Enqueues the copy on `stream`.
cudaError_t launchRegionCopy(const RegionCopy &copy, cudaStream_t stream);
/// Enqueues dst = reducer(dst, src) elementwise on `stream` (`type` gives
/// the element size and arithmetic).
cudaError_t launchRegionReduce(const RegionCopy &copy, Reducer reducer,
                               ElementType type, cudaStream_t stream);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CUDA_REGIONKERNELS_H
