//===- StepMemoryTest.cpp - The pools' rule and the peak prediction -------===//
//
// Tests FreeList's reuse rule, and that predictPeaks gives, worker by
// worker and byte for byte, the peak the CPU Executor's and the device
// executor's pools measure over one to three steps of the hand-built chain
// plan (a fetch, a partial combination, a delivery to one worker, a
// parameter update moved back) at K = 1, 2 and 4, with its composition.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/FreeList.h"
#include "tofu/Runtime/StepMemory.h"
#include "TestKernels.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

struct Empty {};

TEST(FreeListTest, ReusesTheSmallestFitUpToTwiceTheRequest) {
  FreeList<Empty> list;
  EXPECT_EQ(list.take(100).capacity, 100u);
  EXPECT_FALSE(list.take(300).reused);
  list.put(100, Empty());
  list.put(300, Empty());
  EXPECT_EQ(list.getLiveBytes(), 0);
  EXPECT_EQ(list.getPeakBytes(), 400);
  // 60: the 100-byte buffer is within twice 60, so it serves the request
  // and counts 100 live bytes.
  FreeList<Empty>::Grant g = list.take(60);
  EXPECT_TRUE(g.reused);
  EXPECT_EQ(g.capacity, 100u);
  EXPECT_EQ(list.getLiveBytes(), 100);
  // 140: 300 is more than twice the request: a new buffer of 140.
  g = list.take(140);
  EXPECT_FALSE(g.reused);
  EXPECT_EQ(g.capacity, 140u);
  // 150: exactly half of 300 is still served by it.
  EXPECT_EQ(list.take(150).capacity, 300u);
  EXPECT_TRUE(list.getKept().empty());
  // A request of 0 bytes is one of 1 byte.
  EXPECT_EQ(list.take(0).capacity, 1u);
  list.resetPeak();
  EXPECT_EQ(list.getPeakBytes(), list.getLiveBytes());
}

TEST(StepMemoryTest, MessagesAreOnePerPairInOrder) {
  std::vector<Piece> pieces = {Piece{1, 0, box({0}, {3})},
                               Piece{0, 1, box({0}, {2})},
                               Piece{1, 1, box({0}, {5})},
                               Piece{1, 0, box({4}, {5})}};
  std::vector<Message> messages =
      getMessages(pieces, [](const Piece &) { return 4u; });
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].src, 0u);
  EXPECT_EQ(messages[0].dst, 1u);
  EXPECT_EQ(messages[0].bytes, 8u);
  EXPECT_EQ(messages[1].src, 1u);
  EXPECT_EQ(messages[1].dst, 0u);
  EXPECT_EQ(messages[1].bytes, 16u);
}

class PredictPeaksTest : public testing::TestWithParam<unsigned> {};

TEST_P(PredictPeaksTest, EqualsWhatBothExecutorsMeasure) {
  unsigned k = GetParam();
  ExecutablePlan plan = makeChainPlan(k);
  KernelTable kernels({KernelInfo{"mm", matmul, nullptr, 3},
                       KernelInfo{"scale", scale, nullptr, 2}});
  auto transport = createThreadTransport(k, std::chrono::seconds(10));
  Executor cpu(plan, kernels, *transport);
  auto device = createHostDevice(k, kernels);
  auto communicator = createHostCommunicator(*device);
  DeviceExecutor gpu(plan, *device, *communicator);
  for (StepExecutor *e : {static_cast<StepExecutor *>(&cpu),
                          static_cast<StepExecutor *>(&gpu)}) {
    e->setInput(0, iota({M, N}, 0.5f));
    e->setInput(1, iota({N, P}, 0.25f));
  }
  // w (tensor 1) is the parameter, w2 its next value; the rest activations.
  std::vector<TensorMemory> tensors(plan.tensors.size());
  tensors[1].use = tensors[4].use = MemoryUse::Parameter;
  std::vector<std::int64_t> cpuPeaks(k, 0), gpuPeaks(k, 0);
  for (unsigned steps = 1; steps <= 3; ++steps) {
    StepResult a = cpu.runStep(), b = gpu.runStep();
    std::vector<WorkerPeak> predicted =
        predictPeaks(plan, cpu.getSchedule(), tensors, steps);
    ASSERT_EQ(predicted.size(), k);
    for (unsigned w = 0; w != k; ++w) {
      cpuPeaks[w] = std::max(cpuPeaks[w], a.peakBytesPerWorker[w]);
      gpuPeaks[w] = std::max(gpuPeaks[w], b.peakBytesPerWorker[w]);
      EXPECT_EQ(predicted[w].bytes, cpuPeaks[w])
          << "worker " << w << ", " << steps << " steps";
      EXPECT_EQ(predicted[w].bytes, gpuPeaks[w])
          << "worker " << w << ", " << steps << " steps";
      const auto &uses = predicted[w].uses;
      EXPECT_EQ(std::accumulate(uses.begin(), uses.end(), std::int64_t(0)),
                predicted[w].bytes);
      // Every worker stores a box of w at its peak.
      EXPECT_GE(uses[unsigned(MemoryUse::Parameter)],
                plan.tensors[1].stored[w]->getVolume() * 4);
      if (k > 1) {
        EXPECT_EQ(uses[unsigned(MemoryUse::Gradient)], 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, PredictPeaksTest,
                         testing::Values(1u, 2u, 4u));

} // namespace
