//===- DeviceProcessesTest.cpp - The device executor across processes -----===//
//
// Runs the device executor as it runs under mpirun, one worker per
// process, with the K "processes" simulated by threads of this test: each
// has a host device holding its worker only, a host communicator whose
// transfers to other workers go through a transport, and a transport
// whose local worker is its own and whose sums rendezvous with the others
// (OneWorkerTransport.h).
// Each process's step results and worker 0's gathered values must equal
// the device executor's in one process, bit for bit. Also: a failure in
// one process ends the others' waits, a process's device refuses other
// workers, and the GPU placement rule.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/Error.h"
#include "OneWorkerTransport.h"
#include "TestKernels.h"

#include "gtest/gtest.h"

#include <thread>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

/// The tensors the tests gather: w (updated), y, w2, z.
const std::vector<unsigned> Gathered = {1, 3, 4, 5};

/// What one simulated process saw: per step, its result and its gathers.
struct Seen {
  std::vector<StepResult> results;
  std::vector<HostTensor> gathered;
  std::string error;
  /// The worker whose pieces the process's schedule holds (-1: all), and
  /// how many pieces.
  int scheduled = -2;
  size_t pieces = 0;
};

size_t countPieces(const Schedule &schedule) {
  size_t pieces = schedule.nextStep.size();
  for (const OpSchedule &ops : schedule.ops)
    pieces += ops.fetch.size() + ops.reduce.size() + ops.deliver.size();
  return pieces;
}

/// Runs `steps` steps of `plan` on K simulated processes (worker `fail`
/// failing at op 0 if set); returns each process's view.
std::vector<Seen> runProcesses(const ExecutablePlan &plan, unsigned steps,
                               int fail = -1) {
  unsigned k = plan.workers;
  OneWorkerTransport::Shared shared;
  shared.inner = createThreadTransport(k, std::chrono::seconds(10));
  KernelTable kernels = makeChainKernels();
  std::vector<Seen> seen(k);
  std::vector<std::thread> threads;
  for (unsigned r = 0; r != k; ++r)
    threads.emplace_back([&, r] {
      try {
        OneWorkerTransport processes(shared, r);
        auto device = createHostDevice(k, kernels, 0, {r});
        auto communicator = createHostCommunicator(*device, &processes);
        DeviceExecutor executor(plan, *device, *communicator, &processes);
        EXPECT_EQ(executor.isRoot(), r == 0);
        seen[r].scheduled = executor.getSchedule().worker;
        seen[r].pieces = countPieces(executor.getSchedule());
        setChainInputs(executor);
        if (fail >= 0)
          executor.injectFailure(unsigned(fail), 0);
        for (unsigned s = 0; s != steps; ++s) {
          seen[r].results.push_back(executor.runStep());
          for (unsigned t : Gathered)
            seen[r].gathered.push_back(executor.gather(t));
        }
      } catch (const RuntimeError &e) {
        seen[r].error = e.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  return seen;
}

class DeviceProcessesTest : public testing::TestWithParam<unsigned> {};

TEST_P(DeviceProcessesTest, AgreesWithOneProcess) {
  unsigned k = GetParam();
  ExecutablePlan plan = makeChainPlan(k);
  KernelTable kernels = makeChainKernels();
  auto device = createHostDevice(k, kernels);
  auto communicator = createHostCommunicator(*device);
  DeviceExecutor one(plan, *device, *communicator);
  setChainInputs(one);
  std::vector<Seen> seen = runProcesses(plan, 2);
  // Each process (one worker, the host communicator pairing transfers per
  // pair of workers) runs its own worker's schedule only.
  EXPECT_EQ(one.getSchedule().worker, -1);
  for (unsigned r = 0; r != k; ++r) {
    EXPECT_EQ(seen[r].scheduled, int(r));
    EXPECT_EQ(seen[r].pieces, countPieces(buildWorkerSchedule(plan, r)));
    EXPECT_LT(seen[r].pieces, countPieces(one.getSchedule()));
  }
  for (unsigned s = 0; s != 2; ++s) {
    StepResult want = one.runStep();
    EXPECT_GT(want.movedBytes, 0);
    for (unsigned r = 0; r != k; ++r) {
      ASSERT_EQ(seen[r].error, "") << "process " << r;
      const StepResult &got = seen[r].results.at(s);
      EXPECT_EQ(got.movedBytes, want.movedBytes) << "process " << r;
      EXPECT_EQ(got.peakBytesPerWorker, want.peakBytesPerWorker);
    }
    for (unsigned g = 0; g != Gathered.size(); ++g) {
      unsigned t = Gathered[g];
      HostTensor expected = one.gather(t);
      const HostTensor &root = seen[0].gathered.at(s * Gathered.size() + g);
      EXPECT_EQ(root.shape, expected.shape);
      EXPECT_TRUE(root.data == expected.data)
          << "tensor " << plan.tensors[t].name << " step " << s;
      for (unsigned r = 1; r != k; ++r)
        EXPECT_TRUE(
            seen[r].gathered.at(s * Gathered.size() + g).data.empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, DeviceProcessesTest, testing::Values(2u, 4u));

TEST(DeviceProcesses, AFailureEndsTheOthersWaits) {
  std::vector<Seen> seen = runProcesses(makeChainPlan(4), 1, 1);
  EXPECT_EQ(seen[1].error, "worker 1: injected failure at op 'mm'");
  for (unsigned r : {0u, 2u, 3u})
    EXPECT_NE(seen[r].error.find("worker 1 failed"), std::string::npos)
        << "process " << r << ": " << seen[r].error;
}

TEST(DeviceProcesses, ADeviceHoldsOnlyItsProcessWorkers) {
  KernelTable kernels = makeChainKernels();
  auto device = createHostDevice(2, kernels, 0, {1});
  EXPECT_THROW(device->allocate(0, 16), RuntimeError);
  void *b = device->allocate(1, 16);
  // Without a transport, a transfer to another process's worker is an error.
  auto communicator = createHostCommunicator(*device);
  EXPECT_THROW(communicator->exchange({Transfer{1, 0, b, nullptr, 16}}),
               RuntimeError);
  device->deallocate(1, b);
}

TEST(DevicePlacement, WorkersOnGpus) {
  // One process, all workers: w mod #GPUs (virtual workers beyond).
  EXPECT_EQ(placeWorkersOnGpus(5, {0, 1, 2, 3, 4}, 0, 2),
            (std::vector<int>{0, 1, 0, 1, 0}));
  // One worker per rank: the rank's index on its node mod #GPUs.
  EXPECT_EQ(placeWorkersOnGpus(4, {3}, 1, 4), (std::vector<int>{-1, -1, -1, 1}));
  EXPECT_EQ(placeWorkersOnGpus(8, {6}, 6, 4),
            (std::vector<int>{-1, -1, -1, -1, -1, -1, 2, -1}));
  EXPECT_THROW(placeWorkersOnGpus(2, {0, 1}, 0, 0), RuntimeError);
}

} // namespace
