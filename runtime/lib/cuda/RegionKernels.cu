//===- RegionKernels.cu - Box copies and reductions on a GPU --------------===//
//
// This file implements the CUDA device's copy and reduction kernels: one
// thread per element of the region, which it locates in both boxes by its
// row-major rank (locateInRegion, RegionCopy.h).
//
//===----------------------------------------------------------------------===//

#include "RegionKernels.h"

#include <cstdint>

using namespace tofu::runtime;

namespace {

template <typename T>
__global__ void copyKernel(const RegionCopy c, std::int64_t n) {
  std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  std::int64_t s, d;
  locateInRegion(c, t, s, d);
  static_cast<T *>(c.dst)[d] = static_cast<const T *>(c.src)[s];
}

template <typename T>
__device__ T combine(Reducer r, T a, T b) {
  switch (r) {
  case Reducer::Sum:
    return T(a + b);
  case Reducer::Prod:
    return T(a * b);
  case Reducer::Max:
    return a > b || a != a ? a : b;
  case Reducer::Min:
    return a < b || a != a ? a : b;
  }
  return a;
}

template <typename T>
__global__ void reduceKernel(const RegionCopy c, Reducer r, std::int64_t n) {
  std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  std::int64_t s, d;
  locateInRegion(c, t, s, d);
  T *out = static_cast<T *>(c.dst) + d;
  *out = combine(r, *out, static_cast<const T *>(c.src)[s]);
}

unsigned blocks(std::int64_t n) {
  return unsigned((n + DeviceBlockSize - 1) / DeviceBlockSize);
}

} // namespace

cudaError_t tofu::runtime::launchRegionCopy(const RegionCopy &c,
                                            cudaStream_t stream) {
  std::int64_t n = getRegionVolume(c);
  if (n == 0)
    return cudaSuccess;
  switch (c.elementSize) {
  case 1:
    copyKernel<std::uint8_t><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, n);
    break;
  case 4:
    copyKernel<std::uint32_t><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, n);
    break;
  case 8:
    copyKernel<std::uint64_t><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, n);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t tofu::runtime::launchRegionReduce(const RegionCopy &c,
                                              Reducer r, ElementType type,
                                              cudaStream_t stream) {
  std::int64_t n = getRegionVolume(c);
  if (n == 0)
    return cudaSuccess;
  switch (type) {
  case ElementType::F32:
    reduceKernel<float><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, r, n);
    break;
  case ElementType::F64:
    reduceKernel<double><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, r, n);
    break;
  case ElementType::I64:
    reduceKernel<std::int64_t><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, r, n);
    break;
  case ElementType::I32:
    reduceKernel<std::int32_t><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, r, n);
    break;
  case ElementType::I8:
  case ElementType::Bool: // as Box.cpp's reduceRegion: 8-bit integers
    reduceKernel<std::int8_t><<<blocks(n), DeviceBlockSize, 0, stream>>>(c, r, n);
    break;
  case ElementType::F16:
  case ElementType::BF16: // no 16-bit kernels here yet (nor copies: size 2)
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
