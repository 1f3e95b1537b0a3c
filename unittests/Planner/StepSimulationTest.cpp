//===- StepSimulationTest.cpp - Workers sharing cores, by hand ------------===//
//
// simulateStep (tofu/Planner/StepSimulation.h) on programs small enough to
// time by hand: the expected times are worked out in each test's comment.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/StepSimulation.h"

#include "gtest/gtest.h"

using namespace tofu::planner;

namespace {

using Program = std::vector<StepAction>;

TEST(StepSimulationTest, EnoughCoresRunsEachWorkerAlone) {
  // Two workers on two cores: each takes the sum of its actions.
  SimulatedStep step =
      simulateStep({Program{StepAction::compute(1), StepAction::move(0.5)},
                    Program{StepAction::compute(3)}},
                   0, 2, 0);
  EXPECT_DOUBLE_EQ(step.finished[0], 1.5);
  EXPECT_DOUBLE_EQ(step.finished[1], 3);
  EXPECT_DOUBLE_EQ(step.seconds, 3);
  EXPECT_DOUBLE_EQ(step.computeSeconds[0], 1);
  EXPECT_DOUBLE_EQ(step.computeSeconds[1], 3);
}

TEST(StepSimulationTest, ReceiverWaitsForSenderAndLatency) {
  // Worker 1 needs worker 0's message, sent after 2 s of compute, arriving
  // 0.25 s later; then it computes 1 s: 3.25 s. Worker 1's first second of
  // compute runs while it could not have received anything anyway.
  SimulatedStep step =
      simulateStep({Program{StepAction::compute(2), StepAction::send(0)},
                    Program{StepAction::compute(1), StepAction::receive(0),
                            StepAction::compute(1)}},
                   1, 2, 0.25);
  EXPECT_DOUBLE_EQ(step.finished[0], 2);
  EXPECT_DOUBLE_EQ(step.finished[1], 3.25);
  EXPECT_DOUBLE_EQ(step.computeSeconds[1], 2);
}

TEST(StepSimulationTest, MoreWorkersThanCoresShareThem) {
  // Four workers on two cores, each action timed with all four running
  // (a 1 s action is 0.5 core-seconds). All four running: 1 s each.
  SimulatedStep together = simulateStep(
      {Program{StepAction::compute(1)}, Program{StepAction::compute(1)},
       Program{StepAction::compute(1)}, Program{StepAction::compute(1)}},
      0, 2, 0);
  EXPECT_DOUBLE_EQ(together.seconds, 1);
  // Workers 2 and 3 wait for messages that workers 0 and 1 send after 1 s
  // of their own: until then 0 and 1 have a core each and finish at 0.5 s;
  // then 2 and 3 compute 0.5 core-seconds on a core each: done at 1 s.
  // A sum of the calibrated calls per worker would say 2 s for 2 and 3.
  SimulatedStep chained =
      simulateStep({Program{StepAction::compute(1), StepAction::send(0)},
                    Program{StepAction::compute(1), StepAction::send(1)},
                    Program{StepAction::receive(0), StepAction::compute(1)},
                    Program{StepAction::receive(1), StepAction::compute(1)}},
                   2, 2, 0);
  EXPECT_DOUBLE_EQ(chained.finished[0], 0.5);
  EXPECT_DOUBLE_EQ(chained.finished[2], 1);
  EXPECT_DOUBLE_EQ(chained.seconds, 1);
  // Three running on two cores: each at 2/3 of a core. Worker 0 (0.25
  // core-seconds) ends at 0.375 s; workers 1 and 2 then have 0.25 left of
  // 0.5 and finish at 0.375 + 0.25 = 0.625 s.
  SimulatedStep three = simulateStep(
      {Program{StepAction::compute(0.5)}, Program{StepAction::compute(1)},
       Program{StepAction::compute(1)}, Program{}},
      0, 2, 0);
  EXPECT_DOUBLE_EQ(three.finished[0], 0.375);
  EXPECT_DOUBLE_EQ(three.finished[1], 0.625);
  EXPECT_DOUBLE_EQ(three.seconds, 0.625);
}

TEST(StepSimulationTest, WaitingWorkerLeavesItsCoreToPeers) {
  // Three workers on one core, actions timed with three running (1 s is
  // 1/3 core-second). Worker 2 waits for worker 0's message: until
  // worker 0's 1/3 core-second is done, workers 0 and 1 run at half a core
  // (0.667 s); worker 0 sends, worker 2 starts; workers 1 (1/6 left of
  // 1/2) and 2 (1/3) share the core: 1 ends at 0.667 + 1/3 = 1, then 2
  // alone needs the last 1/6: 1.1667 s. Only Compute time counts as
  // compute: worker 2's 0.5 s.
  SimulatedStep step =
      simulateStep({Program{StepAction::compute(1), StepAction::send(0)},
                    Program{StepAction::move(1.5)},
                    Program{StepAction::receive(0), StepAction::compute(1)}},
                   1, 1, 0);
  EXPECT_NEAR(step.finished[0], 2.0 / 3, 1e-12);
  EXPECT_NEAR(step.finished[1], 1, 1e-12);
  EXPECT_NEAR(step.seconds, 7.0 / 6, 1e-12);
  EXPECT_NEAR(step.computeSeconds[2], 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(step.computeSeconds[1], 0);
}

} // namespace
