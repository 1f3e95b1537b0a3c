//===- CalibrateTimingTest.cpp - tofu-calibrate's kernel timing -----------===//

#include "Timing.h"

#include "gtest/gtest.h"

#include <chrono>

using namespace tofu;

namespace {

/// A kernel that spins for about 200 microseconds.
void spin(const runtime::KernelCall &) {
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (std::chrono::steady_clock::now() < end)
    ;
}

KernelShape smallShape() {
  KernelShape shape;
  shape.inputs = {{4}};
  shape.output = {4};
  shape.varExtents = {4};
  return shape;
}

// Alone, a call takes what the kernel takes.
TEST(CalibrateTimingTest, TimesOneProcess) {
  double seconds = timeKernel(spin, smallShape(), 1, 0.002);
  EXPECT_GE(seconds, 190e-6);
  EXPECT_LT(seconds, 2e-3);
}

// Under MPI every round starts after a barrier and counts as long as the
// slowest process took: here the other processes are three times slower,
// so the call is timed at about three times this process's own time.
TEST(CalibrateTimingTest, RoundsLastAsLongAsTheSlowestProcess) {
  unsigned barriers = 0, maxima = 0;
  ProcessRounds processes{[&] { ++barriers; },
                          [&](double seconds) {
                            ++maxima;
                            return 3 * seconds;
                          }};
  double seconds = timeKernel(spin, smallShape(), 1, 0.002, &processes);
  EXPECT_EQ(barriers, KernelRounds);
  // One maximum sizes the rounds, then one per round.
  EXPECT_EQ(maxima, KernelRounds + 1);
  EXPECT_GE(seconds, 3 * 190e-6);
}

} // namespace
