//===- KernelTimesTest.cpp - Per-op device times over rounds --------------===//

#include "tofu/Runtime/KernelTimes.h"

#include "gtest/gtest.h"

using namespace tofu::runtime;

namespace {

// Each op keeps its fastest round, with that round's launch count; an op
// absent from a round keeps what it had; the library is the last round's.
TEST(KernelTimesTest, KeepsEachOpsFastestRound) {
  KernelTimes times;
  times.addRound({3e-3, 1e-3}, {1, 2},
                 {KernelLibrary::Generated, KernelLibrary::CuBlas});
  times.addRound({2e-3, 4e-3, 5e-3}, {1, 4, 1},
                 {KernelLibrary::CuDnn, KernelLibrary::CuBlas,
                  KernelLibrary::Generated});
  times.addRound({6e-3, 0, 0}, {1, 0, 0},
                 {KernelLibrary::CuDnn, KernelLibrary::Generated,
                  KernelLibrary::Generated});
  EXPECT_EQ(times.rounds, 3u);
  ASSERT_EQ(times.seconds.size(), 3u);
  EXPECT_DOUBLE_EQ(times.seconds[0], 2e-3);
  EXPECT_DOUBLE_EQ(times.seconds[1], 1e-3);
  EXPECT_EQ(times.launches[1], 2u);
  EXPECT_DOUBLE_EQ(times.seconds[2], 5e-3);
  EXPECT_EQ(times.library[0], KernelLibrary::CuDnn);
  EXPECT_EQ(times.library[1], KernelLibrary::CuBlas);
  EXPECT_STREQ(getKernelLibraryName(times.library[1]), "cuBLAS");
}

} // namespace
