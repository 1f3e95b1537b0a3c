//===- ScheduleTest.cpp - The runtime's transfers and executor ------------===//
//
// Tests the schedule against the cost model's worked example shapes
// (docs/CostModel.md), and the executor with a hand-written matmul kernel:
// a reduce:k share at K = 2 moves exactly the partial transfers the cost
// model charges and computes the product.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"
#include "TestKernels.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

TEST(ScheduleTest, ReduceMovesWhatTheCostModelCharges) {
  ExecutablePlan plan = makeReducePlan(4, 6, 8);
  Schedule schedule = buildSchedule(plan);
  // Fetch: worker 0 reads x[0:4, 0:3] (holds rows 0:2: 2x3 remote) and
  // w[0:3, 0:8] (holds columns 0:4: 3x4 remote); worker 1 likewise.
  EXPECT_EQ(schedule.fetchBytes, 2 * (2 * 3 + 3 * 4) * 4);
  // Partial: |S| = 2, |D| = 1 within S: one transfer per element of h.
  EXPECT_EQ(schedule.reduceBytes, 4 * 8 * 4);
  EXPECT_EQ(schedule.deliverBytes, 0);
  EXPECT_EQ(schedule.nextStepBytes, 0);
}

TEST(ScheduleTest, ExecutorComputesAndCountsTheReduce) {
  ExecutablePlan plan = makeReducePlan(4, 6, 8);
  KernelTable kernels({KernelInfo{"mm", matmul, nullptr, 3}});
  auto transport = createThreadTransport(2, std::chrono::seconds(10));
  Executor executor(plan, kernels, *transport);
  HostTensor x = iota({4, 6}, 0.5f), w = iota({6, 8}, 0.25f);
  executor.setInput(0, x);
  executor.setInput(1, w);
  StepResult result = executor.runStep();
  EXPECT_EQ(result.movedBytes, executor.getSchedule().getTotalBytes());
  HostTensor h = executor.gather(2);
  std::vector<float> want = product(x, w, 4, 6, 8);
  const float *hs = reinterpret_cast<const float *>(h.data.data());
  for (int e = 0; e != 4 * 8; ++e)
    EXPECT_FLOAT_EQ(hs[e], want[e]) << e;
}

TEST(ScheduleTest, UncoveredTensorIsAnError) {
  ExecutablePlan plan = makeReducePlan(4, 6, 8);
  plan.tensors[0].stored[1].reset();
  EXPECT_THROW(validatePlan(plan), RuntimeError);
}

} // namespace
