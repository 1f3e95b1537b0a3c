//===- RegionCopy.cpp - Box copies as strided element maps ----------------===//
//
// This file implements describeRegionCopy: row-major strides of both boxes,
// and the region's first element in each.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/RegionCopy.h"

using namespace tofu::runtime;

bool tofu::runtime::describeRegionCopy(const Box &region, const void *src,
                                       const Box &srcBox, void *dst,
                                       const Box &dstBox, unsigned elementSize,
                                       RegionCopy &copy) {
  unsigned rank = region.getRank();
  if (rank > DeviceMaxRank)
    return false;
  copy.rank = rank;
  copy.elementSize = elementSize;
  std::int64_t srcStride = 1, dstStride = 1, srcAt = 0, dstAt = 0;
  for (unsigned d = rank; d-- > 0;) {
    copy.extent[d] = region.getExtent(d);
    copy.srcStride[d] = srcStride;
    copy.dstStride[d] = dstStride;
    srcAt += (region.lo[d] - srcBox.lo[d]) * srcStride;
    dstAt += (region.lo[d] - dstBox.lo[d]) * dstStride;
    srcStride *= srcBox.getExtent(d);
    dstStride *= dstBox.getExtent(d);
  }
  copy.src = static_cast<const char *>(src) + srcAt * elementSize;
  copy.dst = static_cast<char *>(dst) + dstAt * elementSize;
  return true;
}
