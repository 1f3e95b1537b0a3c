//===- DeviceExecutorTest.cpp - The device executor on the host emulation -===//
//
// Runs the device executor over the host-emulated Device and Communicator
// on hand-built plans at K = 1, 2 and 4 (row, column and reduction splits,
// a fetch, a partial combination at several roots, a delivery to one
// worker, a parameter update moved back for the next step) and requires
// the CPU Executor's results bit for bit, the CPU transport's moved bytes,
// and the schedule's bytes. Also: failures, device memory exhaustion, and
// the emulation's check that transfers stay within their workers' memory.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/Error.h"
#include "ChainExecutors.h"

#include "gtest/gtest.h"

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

class DeviceExecutorTest : public testing::TestWithParam<unsigned> {};

TEST_P(DeviceExecutorTest, AgreesWithTheCpuExecutor) {
  unsigned k = GetParam();
  ChainExecutors chain(k);
  const ExecutablePlan &plan = chain.plan;
  Executor &cpu = chain.cpu;
  DeviceExecutor &gpu = chain.gpu;
  for (unsigned step = 0; step != 2; ++step) {
    StepResult a = cpu.runStep(), b = gpu.runStep();
    EXPECT_EQ(b.movedBytes, a.movedBytes) << "step " << step;
    EXPECT_EQ(b.movedBytes, gpu.getSchedule().getTotalBytes());
    if (k > 1) {
      EXPECT_GT(b.movedBytes, 0);
    }
    ASSERT_EQ(b.peakBytesPerWorker.size(), k);
    for (std::int64_t peak : b.peakBytesPerWorker)
      EXPECT_GT(peak, 0);
    for (unsigned t : {1u, 3u, 4u, 5u}) {
      HostTensor want = cpu.gather(t), got = gpu.gather(t);
      EXPECT_EQ(got.shape, want.shape);
      EXPECT_TRUE(got.data == want.data)
          << "tensor " << plan.tensors[t].name << " step " << step;
    }
  }
  // The update reached w: the second step's w is not the input's.
  EXPECT_FALSE(gpu.gather(1).data == iota({N, P}, 0.25f).data);
}

INSTANTIATE_TEST_SUITE_P(Workers, DeviceExecutorTest,
                         testing::Values(1u, 2u, 4u));

/// A device executor of a plan on the host emulation, its inputs set.
struct Rig {
  explicit Rig(ExecutablePlan p, std::size_t capacity = 0)
      : plan(std::move(p)), device(createHostDevice(plan.workers, kernels,
                                                    capacity)),
        communicator(createHostCommunicator(*device)),
        executor(plan, *device, *communicator) {}
  ExecutablePlan plan;
  KernelTable kernels = makeChainKernels();
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> communicator;
  DeviceExecutor executor;
  HostTensor x = iota({M, N}, 0.5f), w = iota({N, P}, 0.25f);
};

TEST(DeviceExecutor, ReduceAtTwoWorkers) {
  Rig rig(makeReducePlan(M, N, P));
  rig.executor.setInput(0, rig.x);
  rig.executor.setInput(1, rig.w);
  StepResult result = rig.executor.runStep();
  const Schedule &schedule = rig.executor.getSchedule();
  EXPECT_EQ(result.movedBytes, schedule.getTotalBytes());
  EXPECT_EQ(schedule.reduceBytes, M * P * 4);
  HostTensor h = rig.executor.gather(2);
  std::vector<float> want = product(rig.x, rig.w, M, N, P);
  const float *hs = reinterpret_cast<const float *>(h.data.data());
  for (int e = 0; e != M * P; ++e)
    EXPECT_FLOAT_EQ(hs[e], want[e]) << e;
}

TEST(DeviceExecutor, InjectedFailureNamesTheWorker) {
  Rig rig(makeChainPlan(2));
  rig.executor.setInput(0, rig.x);
  rig.executor.setInput(1, rig.w);
  rig.executor.injectFailure(1, 2);
  try {
    rig.executor.runStep();
    FAIL() << "no failure";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "worker 1: injected failure at op 'scale-w'");
  }
  // The hook fires once: the next step runs.
  EXPECT_NO_THROW(rig.executor.runStep());
}

TEST(DeviceExecutor, MissingInputIsAnError) {
  Rig rig(makeChainPlan(2));
  rig.executor.setInput(0, rig.x);
  EXPECT_THROW(rig.executor.runStep(), RuntimeError);
}

TEST(DeviceExecutor, OutOfDeviceMemory) {
  // x and w's boxes fit (4x6 and 3x8 f32: 96 bytes each), h's does not.
  Rig rig(makeChainPlan(2), 200);
  rig.executor.setInput(0, rig.x);
  rig.executor.setInput(1, rig.w);
  try {
    rig.executor.runStep();
    FAIL() << "no failure";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("out of device memory"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeviceExecutor, HostTransfersStayInTheirWorkersMemory) {
  KernelTable kernels = makeChainKernels();
  auto device = createHostDevice(2, kernels);
  auto communicator = createHostCommunicator(*device);
  void *a = device->allocate(0, 16), *b = device->allocate(1, 16);
  communicator->exchange({Transfer{0, 1, a, b, 16}});
  EXPECT_EQ(communicator->getMovedBytes(), 16);
  // The destination buffer is worker 0's, not worker 1's.
  EXPECT_THROW(communicator->exchange({Transfer{1, 0, b, b, 16}}),
               RuntimeError);
  EXPECT_THROW(communicator->exchange({Transfer{0, 1, a, b, 32}}),
               RuntimeError);
  device->deallocate(0, a);
  device->deallocate(1, b);
}

TEST(DeviceExecutor, WorkerCountMustMatch) {
  ExecutablePlan plan = makeChainPlan(2);
  KernelTable kernels = makeChainKernels();
  auto device = createHostDevice(4, kernels);
  auto communicator = createHostCommunicator(*device);
  EXPECT_THROW(DeviceExecutor(plan, *device, *communicator), RuntimeError);
}

} // namespace
