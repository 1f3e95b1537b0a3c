//===- DeviceExecutor.h - Run an ExecutablePlan on a Device -----*- C++ -*-===//
//
// This file declares the device executor: the step of StepEngine.h
// (runtime/lib; the CPU Executor's Schedule and phases: fetch, compute,
// reduce at roots, deliver, free, next-step updates) driven from one host
// thread over a Device's K worker streams and a Communicator. Each phase of
// an op packs the pieces bound elsewhere into one staging buffer per
// (source, destination) pair on the source's stream, moves the pairs one
// Communicator group at a time, and unpacks (or, for partial values,
// combines) them on the destinations' streams; so the bytes moved are
// those the CPU transport moves, the plan's comm_bytes. Buffers come
// from a DevicePool per worker, whose peak is the step's
// peak_bytes_per_worker. Given a Transport spanning several processes (one
// worker per MPI rank), it runs only this process's workers, as the CPU
// Executor does: the communicator moves what they send and receive, and
// the transport sums the counts and gathers results to worker 0's process.
// docs/DeviceExecutor.md describes it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEEXECUTOR_H
#define TOFU_RUNTIME_DEVICEEXECUTOR_H

#include "tofu/Runtime/DevicePool.h"
#include "tofu/Runtime/Executor.h"
#include "tofu/Runtime/Liveness.h"

namespace tofu {
namespace runtime {

/// Runs steps of a plan on a Device.
class DeviceExecutor : public StepExecutor {
public:
  /// Runs the workers of `plan` that `processes` runs in this process (all
  /// of them when it is null), on `device` and `communicator` (whose
  /// transfers between processes must go through the same processes).
  /// Every process makes the same calls in the same order.
  DeviceExecutor(const ExecutablePlan &plan, Device &device,
                 Communicator &communicator, Transport *processes = nullptr);
  ~DeviceExecutor() override;

  void setInput(unsigned tensor, const HostTensor &value) override;
  void setInputShard(unsigned tensor, unsigned worker, Bytes values) override;
  Bytes readShard(unsigned tensor, unsigned worker) override;
  StepResult runStep() override;
  HostTensor gather(unsigned tensor) override;
  const Schedule &getSchedule() const override { return schedule; }
  void injectFailure(unsigned worker, unsigned op) override;
  bool isRoot() const override { return workers[0] != nullptr; }
  unsigned getNumDirectUpdates() const override;

  /// One worker's pool and stored tensors.
  struct Worker {
    Worker(Device &device, unsigned id) : id(id), pool(device, id) {}
    unsigned id;
    DevicePool pool;
    /// Per tensor: its stored box's values on the device (empty when not
    /// held now).
    std::vector<DeviceBuffer> stored;
    /// Per tensor: a next value this worker writes over what it replaces
    /// (InPlaceUpdates.h).
    std::vector<bool> inPlace;
    /// The next values the last step computed straight into what they
    /// replace (writesOverReplaced).
    unsigned overwritten = 0;
  };

private:
  class Step;
  void uploadInputs(Worker &worker);

  const ExecutablePlan &plan;
  /// The plan's liveness, once for every step.
  Liveness liveness;
  Device &device;
  Communicator &communicator;
  /// One process's transport when none was given.
  std::unique_ptr<Transport> ownTransport;
  Transport *transport;
  Schedule schedule;
  /// Per worker id, the worker if this process runs it, else null.
  std::vector<std::unique_ptr<Worker>> workers;
  std::unique_ptr<InputShards> inputs;
  unsigned steps = 0;
  int failWorker = -1;
  unsigned failOp = 0;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEEXECUTOR_H
