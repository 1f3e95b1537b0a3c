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

#include "gtest/gtest.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

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

/// One "process" of a job whose processes share a thread transport: it
/// runs one worker, counts what that worker sends, and adds counts up with
/// the other processes at a barrier (what the MPI transport does over MPI).
class OneWorkerTransport : public Transport {
public:
  struct Shared {
    std::unique_ptr<Transport> inner;
    std::mutex mutex;
    std::condition_variable done;
    std::vector<std::int64_t> total, result;
    unsigned arrived = 0, generation = 0;
  };
  OneWorkerTransport(Shared &shared, unsigned worker)
      : shared(shared), worker(worker) {}
  unsigned getNumWorkers() const override {
    return shared.inner->getNumWorkers();
  }
  std::vector<unsigned> getLocalWorkers() const override { return {worker}; }
  void sumOverProcesses(std::vector<std::int64_t> &values) override {
    std::unique_lock<std::mutex> lock(shared.mutex);
    shared.total.resize(values.size());
    for (size_t i = 0; i != values.size(); ++i)
      shared.total[i] += values[i];
    unsigned generation = shared.generation;
    if (++shared.arrived == getNumWorkers()) {
      shared.result = std::move(shared.total);
      shared.total.clear();
      shared.arrived = 0;
      ++shared.generation;
      shared.done.notify_all();
    } else {
      shared.done.wait(lock, [&] { return shared.generation != generation; });
    }
    values = shared.result;
  }
  void send(unsigned src, unsigned dst, std::uint64_t tag,
            Bytes payload) override {
    EXPECT_EQ(src, worker);
    if (!(tag & UncountedTag))
      moved += payload.size();
    shared.inner->send(src, dst, tag, std::move(payload));
  }
  Bytes receive(unsigned dst, unsigned src, std::uint64_t tag) override {
    EXPECT_EQ(dst, worker);
    return shared.inner->receive(dst, src, tag);
  }
  void fail(unsigned w, const std::string &why) override {
    shared.inner->fail(w, why);
  }
  std::int64_t getMovedBytes() const override { return moved; }
  void resetMovedBytes() override { moved = 0; }

private:
  Shared &shared;
  unsigned worker;
  std::int64_t moved = 0;
};

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

} // namespace
