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

#include "gtest/gtest.h"

#include <cstring>

using namespace tofu::runtime;

namespace {

Box box(std::vector<std::int64_t> lo, std::vector<std::int64_t> hi) {
  return Box{std::move(lo), std::move(hi)};
}

/// h[i,j] = Sum_k x[i,k] * w[k,j] over f32 boxes.
void matmul(const KernelCall &call) {
  const BoxView &x = call.inputs[0], &w = call.inputs[1], &h = call.output;
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    for (std::int64_t j = call.varLo[1]; j < call.varHi[1]; ++j) {
      float acc = 0;
      for (std::int64_t k = call.varLo[2]; k < call.varHi[2]; ++k)
        acc += static_cast<float *>(x.data)[(i - x.lo[0]) * x.extent[1] +
                                            (k - x.lo[1])] *
               static_cast<float *>(w.data)[(k - w.lo[0]) * w.extent[1] +
                                            (j - w.lo[1])];
      static_cast<float *>(h.data)[(i - h.lo[0]) * h.extent[1] +
                                   (j - h.lo[1])] = acc;
    }
}

/// x[M,N] @ w[N,P] on two workers: x split by rows, w by columns, h by
/// rows; the op reduces over k (worker c takes half of the k range).
ExecutablePlan makeReducePlan(std::int64_t m, std::int64_t n, std::int64_t p) {
  ExecutablePlan plan;
  plan.workers = 2;
  auto tensor = [&](std::string name, std::vector<std::int64_t> shape,
                    std::vector<std::optional<Box>> stored) {
    TensorInfo t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.stored = std::move(stored);
    t.persistent = true;
    return t;
  };
  plan.tensors.push_back(tensor("x", {m, n},
                                {box({0, 0}, {m / 2, n}),
                                 box({m / 2, 0}, {m, n})}));
  plan.tensors[0].graphInput = true;
  plan.tensors.push_back(tensor("w", {n, p},
                                {box({0, 0}, {n, p / 2}),
                                 box({0, p / 2}, {n, p})}));
  plan.tensors[1].graphInput = true;
  plan.tensors.push_back(tensor("h", {m, p},
                                {box({0, 0}, {m / 2, p}),
                                 box({m / 2, 0}, {m, p})}));
  OpInfo op;
  op.name = "mm";
  op.inputs = {0, 1};
  op.output = 2;
  op.partial = true;
  for (std::int64_t c = 0; c != 2; ++c) {
    std::int64_t k0 = c * n / 2, k1 = (c + 1) * n / 2;
    op.workers.push_back(OpShare{box({0, 0, k0}, {m, p, k1}),
                                 {box({0, k0}, {m, k1}), box({k0, 0}, {k1, p})},
                                 box({0, 0}, {m, p})});
  }
  plan.ops.push_back(op);
  return plan;
}

HostTensor iota(std::vector<std::int64_t> shape, float scale) {
  HostTensor t{ElementType::F32, shape, {}};
  std::int64_t n = Box::whole(shape).getVolume();
  t.data.resize(n * 4);
  for (std::int64_t i = 0; i != n; ++i) {
    float v = scale * float(i % 7 - 3);
    std::memcpy(t.data.data() + i * 4, &v, 4);
  }
  return t;
}

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
  const float *xs = reinterpret_cast<const float *>(x.data.data());
  const float *ws = reinterpret_cast<const float *>(w.data.data());
  const float *hs = reinterpret_cast<const float *>(h.data.data());
  for (int i = 0; i != 4; ++i)
    for (int j = 0; j != 8; ++j) {
      float want = 0;
      for (int k = 0; k != 6; ++k)
        want += xs[i * 6 + k] * ws[k * 8 + j];
      EXPECT_FLOAT_EQ(hs[i * 8 + j], want) << i << "," << j;
    }
}

TEST(ScheduleTest, UncoveredTensorIsAnError) {
  ExecutablePlan plan = makeReducePlan(4, 6, 8);
  plan.tensors[0].stored[1].reset();
  EXPECT_THROW(validatePlan(plan), RuntimeError);
}

} // namespace
