//===- ScheduleTest.cpp - The runtime's transfers and executor ------------===//
//
// Tests the schedule against the cost model's worked example shapes
// (docs/CostModel.md), and the executor with a hand-written matmul kernel:
// a reduce:k share at K = 2 moves exactly the partial transfers the cost
// model charges and computes the product, also when each worker runs in an
// executor of its own (as under MPI, one process per worker).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"
#include "OneWorkerTransport.h"
#include "TestKernels.h"
#include "ErrorMessage.h"

#include "gtest/gtest.h"

#include <cstring>
#include <thread>

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

TEST(ScheduleTest, OneExecutorPerWorkerAgreesWithOneForAll) {
  ExecutablePlan plan = makeReducePlan(4, 6, 8);
  KernelTable kernels({KernelInfo{"mm", matmul, nullptr, 3}});
  HostTensor x = iota({4, 6}, 0.5f), w = iota({6, 8}, 0.25f);
  auto together = createThreadTransport(2, std::chrono::seconds(10));
  Executor all(plan, kernels, *together);
  all.setInput(0, x);
  all.setInput(1, w);
  StepResult expected = all.runStep();
  HostTensor h = all.gather(2);

  OneWorkerTransport::Shared shared;
  shared.inner = createThreadTransport(2, std::chrono::seconds(10));
  OneWorkerTransport views[2] = {{shared, 0}, {shared, 1}};
  StepResult results[2];
  HostTensor gathered[2];
  std::vector<std::thread> processes;
  for (unsigned p = 0; p != 2; ++p)
    processes.emplace_back([&, p] {
      Executor executor(plan, kernels, views[p]);
      EXPECT_EQ(executor.isRoot(), p == 0);
      executor.setInput(0, x);
      executor.setInput(1, w);
      results[p] = executor.runStep();
      gathered[p] = executor.gather(2);
    });
  for (std::thread &thread : processes)
    thread.join();
  for (unsigned p = 0; p != 2; ++p) {
    // Each process sent part of the bytes; the sums cover both workers.
    EXPECT_EQ(results[p].movedBytes, expected.movedBytes);
    EXPECT_EQ(results[p].peakBytesPerWorker, expected.peakBytesPerWorker);
  }
  EXPECT_GT(views[0].getMovedBytes(), 0);
  EXPECT_GT(views[1].getMovedBytes(), 0);
  EXPECT_EQ(views[0].getMovedBytes() + views[1].getMovedBytes(),
            expected.movedBytes);
  // The process of worker 0 assembles the tensor; the other gets no data.
  EXPECT_EQ(gathered[0].data, h.data);
  EXPECT_EQ(gathered[1].shape, h.shape);
  EXPECT_TRUE(gathered[1].data.empty());
}

TEST(ScheduleTest, UncoveredTensorIsAnError) {
  ExecutablePlan plan = makeReducePlan(4, 6, 8);
  plan.tensors[0].stored[1].reset();
  EXPECT_THROW(validatePlan(plan), RuntimeError);
}

TEST(ScheduleTest, BoxRulesNameTheBoxAndTheCellLeftOut) {
  // The rules validatePlan applies, which the planner's plan checker calls.
  std::vector<std::int64_t> shape = {4, 2};
  Box top{{0, 0}, {2, 2}}, bottom{{2, 0}, {4, 2}}, past{{3, 0}, {5, 2}};
  EXPECT_EQ(getError([&] { checkBoxInTensor("b", top, shape); }), "");
  EXPECT_EQ(getError([&] { checkBoxInTensor("b", past, shape); }),
            "b [3,5)x[0,2) lies outside the tensor [0,4)x[0,2)");
  EXPECT_EQ(getError([&] { checkBoxInTensor("b", Box{{0}, {1}}, shape); }),
            "b has rank 1 but the tensor has rank 2");
  // An empty box lies anywhere.
  EXPECT_EQ(getError([&] { checkBoxInTensor("b", Box{{9, 9}, {9, 9}}, shape); }),
            "");
  EXPECT_EQ(getError([&] { checkBoxesCover("bs", {&top, &bottom}, shape); }),
            "");
  EXPECT_EQ(getError([&] { checkBoxesCover("bs", {&top, nullptr}, shape); }),
            "bs leave [2,4)x[0,2) uncovered");
}

} // namespace
