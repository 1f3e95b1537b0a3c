//===- ChainExecutors.h - The chain plan on both executors ------*- C++ -*-===//
//
// This file defines the fixture the runtime's tests share to compare the
// executors: the chain plan (TestKernels.h) at K workers run by the CPU
// Executor over the thread transport and by the device executor on the
// host emulation, both with the same inputs.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_RUNTIME_CHAINEXECUTORS_H
#define TOFU_UNITTESTS_RUNTIME_CHAINEXECUTORS_H

#include "TestKernels.h"

#include "tofu/Runtime/DeviceExecutor.h"

#include <chrono>

namespace tofu {
namespace runtime {
namespace test {

/// The chain plan at `k` workers on the CPU Executor (`cpu`) and the
/// device executor (`gpu`), x and w set on both.
struct ChainExecutors {
  explicit ChainExecutors(unsigned k)
      : plan(makeChainPlan(k)),
        transport(createThreadTransport(k, std::chrono::seconds(10))),
        cpu(plan, kernels, *transport), device(createHostDevice(k, kernels)),
        communicator(createHostCommunicator(*device)),
        gpu(plan, *device, *communicator) {
    setChainInputs(cpu);
    setChainInputs(gpu);
  }

  ExecutablePlan plan;
  KernelTable kernels = makeChainKernels();
  std::unique_ptr<Transport> transport;
  Executor cpu;
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> communicator;
  DeviceExecutor gpu;
};

} // namespace test
} // namespace runtime
} // namespace tofu

#endif // TOFU_UNITTESTS_RUNTIME_CHAINEXECUTORS_H
