//===- RegionCopyTest.cpp - The GPU box copies' index arithmetic ----------===//
//
// Runs the per-thread arithmetic of the CUDA device's copy kernels
// (describeRegionCopy, locateInRegion) over every thread of the grid on the
// host and requires the bytes Box.h's copyRegion writes: sub-boxes of
// ranks 1 to 4 between boxes of different origins, packing, unpacking.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/RegionCopy.h"

#include "gtest/gtest.h"

#include <cstring>
#include <numeric>

using namespace tofu::runtime;

namespace {

/// Copies like the kernel: thread t moves the element of rank t.
void emulate(const RegionCopy &c) {
  for (std::int64_t t = 0, n = getRegionVolume(c); t != n; ++t) {
    std::int64_t s, d;
    locateInRegion(c, t, s, d);
    std::memcpy(static_cast<char *>(c.dst) + d * c.elementSize,
                static_cast<const char *>(c.src) + s * c.elementSize,
                c.elementSize);
  }
}

void expectSameCopy(const Box &region, const Box &srcBox, const Box &dstBox,
                    unsigned size) {
  std::vector<unsigned char> src(srcBox.getVolume() * size);
  std::iota(src.begin(), src.end(), 1);
  std::vector<unsigned char> want(dstBox.getVolume() * size, 0), got = want;
  copyRegion(region, src.data(), srcBox, want.data(), dstBox, size);
  RegionCopy copy;
  ASSERT_TRUE(describeRegionCopy(region, src.data(), srcBox, got.data(),
                                 dstBox, size, copy));
  emulate(copy);
  EXPECT_EQ(got, want) << region.format() << " of " << srcBox.format()
                       << " into " << dstBox.format();
}

TEST(RegionCopy, MatchesCopyRegion) {
  expectSameCopy(Box{{2}, {5}}, Box{{1}, {9}}, Box{{0}, {6}}, 4);
  expectSameCopy(Box{{1, 2}, {3, 5}}, Box{{0, 1}, {4, 7}}, Box{{1, 0}, {5, 6}},
                 4);
  expectSameCopy(Box{{1, 0, 2}, {2, 3, 4}}, Box{{0, 0, 0}, {3, 3, 5}},
                 Box{{1, 0, 1}, {3, 4, 4}}, 8);
  expectSameCopy(Box{{0, 1, 1, 0}, {2, 2, 3, 3}},
                 Box{{0, 0, 0, 0}, {2, 3, 4, 3}},
                 Box{{0, 1, 1, 0}, {3, 2, 3, 5}}, 1);
}

TEST(RegionCopy, PacksAndUnpacks) {
  Box region{{1, 2}, {3, 5}}, box{{0, 0}, {4, 6}};
  expectSameCopy(region, box, region, 4);
  expectSameCopy(region, region, box, 4);
}

TEST(RegionCopy, RankBeyondTheDeviceLimit) {
  Box nine{std::vector<std::int64_t>(9, 0), std::vector<std::int64_t>(9, 1)};
  RegionCopy copy;
  unsigned char byte = 0;
  EXPECT_FALSE(describeRegionCopy(nine, &byte, nine, &byte, nine, 1, copy));
}

} // namespace
