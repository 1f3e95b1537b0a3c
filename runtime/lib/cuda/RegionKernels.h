//===- RegionKernels.h - Box copies and reductions on a GPU -----*- C++ -*-===//
//
// This file declares the CUDA kernels the CUDA device enqueues for box
// copies (packing and unpacking are copies into and out of a dense box
// equal to the region) and for combining partial values, compiled by nvcc
// from RegionKernels.cu; the rest of TofuRuntimeCUDA is host C++.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CUDA_REGIONKERNELS_H
#define TOFU_RUNTIME_CUDA_REGIONKERNELS_H

#include "tofu/Runtime/Box.h"
#include "tofu/Runtime/DeviceKernel.h"

#include <cuda_runtime_api.h>

namespace tofu {
namespace runtime {

/// A region of a strided source box to a strided destination box, in
/// elements; dimensions past `rank` have extent 1.
struct RegionCopy {
  unsigned rank;
  unsigned elementSize;
  std::int64_t extent[DeviceMaxRank];
  std::int64_t srcStride[DeviceMaxRank], dstStride[DeviceMaxRank];
  const void *src;
  void *dst;
};

/// Describes copying `region` from the dense box `srcBox` at `src` to the
/// dense box `dstBox` at `dst`; false if the rank exceeds DeviceMaxRank.
bool describeRegionCopy(const Box &region, const void *src, const Box &srcBox,
                        void *dst, const Box &dstBox, unsigned elementSize,
                        RegionCopy &copy);

/// Enqueues the copy on `stream`.
cudaError_t launchRegionCopy(const RegionCopy &copy, cudaStream_t stream);
/// Enqueues dst = reducer(dst, src) elementwise on `stream` (`type` gives
/// the element size and arithmetic).
cudaError_t launchRegionReduce(const RegionCopy &copy, Reducer reducer,
                               ElementType type, cudaStream_t stream);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CUDA_REGIONKERNELS_H
