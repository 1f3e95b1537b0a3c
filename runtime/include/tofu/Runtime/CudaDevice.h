//===- CudaDevice.h - Finding the CUDA devices ------------------*- C++ -*-===//
//
// This file declares the device query of `tofu-run --backend cuda`
// (docs/CUDA.md). It goes through the CUDA runtime API (cudaGetDeviceCount)
// when the build found the CUDA toolkit, so that a machine without a GPU or
// without a driver gives one clear error instead of a crash; a build
// without the toolkit answers that it has no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CUDADEVICE_H
#define TOFU_RUNTIME_CUDADEVICE_H

#include <string>

namespace tofu {
namespace runtime {

/// The number of usable CUDA devices; 0 with `why` set (the runtime API's
/// error and code, or that this build has no CUDA) when there is none.
int countCudaDevices(std::string &why);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CUDADEVICE_H
