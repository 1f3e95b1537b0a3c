//===- DeviceKernel.h - The calling convention of CUDA kernels ---*- C++ -*-===//
//
// This file declares what a generated CUDA kernel (`tdlc --emit=cuda`,
// `tofu-graph --emit=cuda-kernels`, docs/CUDA.md) receives: a DeviceCall,
// the KernelCall of Kernel.h flattened into one value (box origins,
// extents and the iteration box copied into fixed arrays) so that it can
// be passed to a `__global__` function by value, and the grid coordinates
// of the thread. It compiles with the host C++ compiler as well as with
// nvcc: TOFU_HD expands to `__host__ __device__` under nvcc and to nothing
// otherwise, so that a kernel body can be run on the host over an emulated
// grid (`kernel-check --target=cuda-host`).
//
// The grid is one-dimensional: thread `block.x * blockSize.x + thread.x`
// computes one output element of the call's output box, in row-major
// order of the output variables (consecutive threads write consecutive
// elements of the innermost dimension).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEKERNEL_H
#define TOFU_RUNTIME_DEVICEKERNEL_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>

#ifdef __CUDACC__
#define TOFU_HD __host__ __device__
#define TOFU_DEVICE __device__
#define TOFU_GLOBAL __global__
#else
#define TOFU_HD
#define TOFU_DEVICE
#define TOFU_GLOBAL
#endif

namespace tofu {
namespace runtime {

/// The most dimensions a tensor of a CUDA kernel may have.
constexpr unsigned DeviceMaxRank = 8;
/// Threads per block of the generated launch functions.
constexpr unsigned DeviceBlockSize = 256;

/// A grid coordinate (CUDA's dim3/uint3 without the CUDA headers).
struct Dim3 {
  unsigned x, y, z;
};

/// A BoxView by value: data is a device pointer on the device.
struct DeviceBox {
  void *data;
  std::int64_t lo[DeviceMaxRank];
  std::int64_t extent[DeviceMaxRank];
};

/// A KernelCall by value, for a kernel of `NumInputs` inputs and `NumVars`
/// index variables (both fixed at generation).
template <unsigned NumInputs, unsigned NumVars> struct DeviceCall {
  DeviceBox inputs[NumInputs ? NumInputs : 1];
  DeviceBox output;
  std::int64_t varLo[NumVars ? NumVars : 1];
  std::int64_t varHi[NumVars ? NumVars : 1];
};

/// Copies `view` into a DeviceBox; false if its rank is too large.
inline bool toDeviceBox(const BoxView &view, DeviceBox &box) {
  if (view.rank > DeviceMaxRank)
    return false;
  box.data = view.data;
  for (unsigned d = 0; d != DeviceMaxRank; ++d) {
    box.lo[d] = d < view.rank ? view.lo[d] : 0;
    box.extent[d] = d < view.rank ? view.extent[d] : 1;
  }
  return true;
}

/// Flattens `call` (the data pointers are kept as they are); false if it
/// does not have NumInputs inputs or a box's rank is too large.
template <unsigned NumInputs, unsigned NumVars>
bool toDeviceCall(const KernelCall &call, DeviceCall<NumInputs, NumVars> &dc) {
  if (call.numInputs != NumInputs)
    return false;
  for (unsigned t = 0; t != NumInputs; ++t)
    if (!toDeviceBox(call.inputs[t], dc.inputs[t]))
      return false;
  if (!toDeviceBox(call.output, dc.output))
    return false;
  for (unsigned v = 0; v != NumVars; ++v) {
    dc.varLo[v] = call.varLo[v];
    dc.varHi[v] = call.varHi[v];
  }
  return true;
}

/// The number of threads a call needs: the elements of the box of the
/// first `rank` (output) variables, 0 if it is empty.
TOFU_HD inline std::int64_t deviceThreadCount(const std::int64_t *lo,
                                      const std::int64_t *hi, unsigned rank) {
  std::int64_t n = 1;
  for (unsigned d = 0; d != rank; ++d)
    n *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
  return n;
}

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEKERNEL_H
