//===- RegionCopy.h - Box copies as strided element maps ---------*- C++ -*-===//
//
// This file declares RegionCopy, a box copy (or reduction) flattened into
// extents and strides so that one GPU thread per element can locate its
// source and destination: the CUDA device's copy and reduction kernels
// (lib/cuda/RegionKernels.cu) use it, and so do host tests of the index
// arithmetic. Packing is a copy into a dense box equal to the region,
// unpacking one out of it. It compiles with and without nvcc; the launch
// functions exist only in TofuRuntimeCUDA.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_REGIONCOPY_H
#define TOFU_RUNTIME_REGIONCOPY_H

#include "tofu/Runtime/Box.h"
#include "tofu/Runtime/DeviceKernel.h"

namespace tofu {
namespace runtime {

/// A region of a strided source box to a strided destination box, in
/// elements; `src` and `dst` point at the region's first element.
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

/// The elements of the region.
TOFU_HD inline std::int64_t getRegionVolume(const RegionCopy &c) {
  std::int64_t n = 1;
  for (unsigned d = 0; d != c.rank; ++d)
    n *= c.extent[d];
  return n;
}

/// The offsets (in elements, from `src` and `dst`) of the element of
/// row-major rank `t` in the region: what thread t of a kernel touches.
TOFU_HD inline void locateInRegion(const RegionCopy &c, std::int64_t t,
                                   std::int64_t &src, std::int64_t &dst) {
  src = dst = 0;
  for (unsigned d = c.rank; d-- > 0;) {
    std::int64_t i = t % c.extent[d];
    t /= c.extent[d];
    src += i * c.srcStride[d];
    dst += i * c.dstStride[d];
  }
}

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_REGIONCOPY_H
