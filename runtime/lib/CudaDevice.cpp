//===- CudaDevice.cpp - Finding the CUDA devices --------------------------===//
//
// This file implements countCudaDevices: cudaGetDeviceCount through the CUDA
// runtime API (cudart, linked statically) where CMake found the toolkit
// (TOFU_HAVE_CUDA_RUNTIME), else the answer that this build has no CUDA.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CudaDevice.h"

#ifdef TOFU_HAVE_CUDA_RUNTIME
#include <cuda_runtime_api.h>
#endif

int tofu::runtime::countCudaDevices(std::string &why) {
#ifdef TOFU_HAVE_CUDA_RUNTIME
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err) +
          " (" + cudaGetErrorName(err) + ")";
    return 0;
  }
  if (count <= 0) {
    why = "cudaGetDeviceCount found no device";
    return 0;
  }
  return count;
#else
  why = "this build has no CUDA (no CUDA toolkit was found at configure time)";
  return 0;
#endif
}
