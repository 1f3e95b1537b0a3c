//===- LinkedPlan.h - Run a compiled plan in a training program -*- C++ -*-===//
//
// This file declares LinkedPlan, the training-program API over a plan
// compiled into the program (GeneratedPlan.h): it owns the plan's executor
// on the transport the program chooses (K threads in one process, or one
// worker per MPI rank: MPITransport.h) and the backend it runs on (the CPU
// Executor, or the device executor over a Device and Communicator), and
// names tensors by the graph's names. Values go in and out either whole
// (every process passes the whole tensor and keeps only its workers' boxes;
// gather assembles a tensor at worker 0's process) or as shards (the values
// of one local worker's stored box), so a rank of a real job never holds
// more than its own shards. Checkpoint.h saves and loads a LinkedPlan's
// persistent tensors; Npz.h reads and writes NumPy archives.
// docs/Linking.md is the user guide.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_LINKEDPLAN_H
#define TOFU_RUNTIME_LINKEDPLAN_H

#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/GeneratedPlan.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// Where and how a LinkedPlan runs. The defaults: K worker threads in this
/// process on the CPU, receives giving up after 60 s.
struct LinkOptions {
  /// The transport between workers; null: the in-process thread transport
  /// (createThreadTransport) with `timeout`. Pass createMPITransport's
  /// (TofuRuntimeMPI) to run one worker per MPI rank.
  std::unique_ptr<Transport> transport;
  /// How long a receive waits for a worker before the step fails naming
  /// it (the thread transport's; an explicit transport has its own).
  std::chrono::milliseconds timeout = std::chrono::milliseconds(60000);
  /// The device the workers run on, with its communicator; null: the CPU
  /// Executor. The device runs the transport's local workers and sums
  /// counts and gathers through the transport.
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> communicator;
  /// The kernels of a device backend (createHostDevice's); kept alive with
  /// the plan. Null for the CPU, which runs the generated kernels.
  std::shared_ptr<KernelProvider> deviceKernels;
  /// The host memory the CPU workers of this process may take, in bytes;
  /// none: MemAvailable of /proc/meminfo (MemoryCheck.h). A plan whose
  /// peaks do not fit is refused before anything is allocated.
  std::optional<std::int64_t> availableMemory;
};

/// A generated plan ready to run.
class LinkedPlan {
public:
  /// Throws RuntimeError on every process when the plan does not fit the
  /// memory of one of them (LinkOptions::availableMemory) or the transport
  /// runs another number of workers. Every process constructs it.
  explicit LinkedPlan(const GeneratedPlan &generated, LinkOptions options = {});
  /// The thread transport with `timeout` (kept for programs written before
  /// LinkOptions).
  LinkedPlan(const GeneratedPlan &generated,
             std::chrono::milliseconds timeout);
  ~LinkedPlan();
  LinkedPlan(const LinkedPlan &) = delete;
  LinkedPlan &operator=(const LinkedPlan &) = delete;

  const GeneratedPlan &getGenerated() const { return generated; }
  const ExecutablePlan &getPlan() const { return plan; }
  unsigned getNumWorkers() const { return plan.workers; }
  StepExecutor &getExecutor() { return *executor; }
  Transport &getTransport() { return *transport; }
  /// The workers this process runs, in increasing order.
  const std::vector<unsigned> &getLocalWorkers() const { return local; }
  /// Whether this process runs worker 0: it gets gather's values and
  /// writes what one process writes (a checkpoint's manifest, losses).
  bool isRoot() const { return executor->isRoot(); }

  /// The index of tensor `name`; throws RuntimeError naming it if absent.
  unsigned getTensor(const std::string &name) const;
  /// The graph's loss: its only scalar f32/f64 output that updates nothing
  /// (not Adam's next step count); throws if there is none or more than
  /// one.
  unsigned getLoss() const;
  /// Graph tensors of role `role` ("param", "input", ...), in graph order.
  std::vector<unsigned> getTensorsOfRole(const std::string &role) const;
  /// The persistent tensors (params and state) a checkpoint holds, in
  /// graph order.
  std::vector<unsigned> getPersistentTensors() const;
  /// The box worker `worker` stores of tensor `tensor`; nullopt if none
  /// (or an empty one).
  std::optional<Box> getStoredBox(unsigned tensor, unsigned worker) const;

  /// Sets graph input (or param, state) `tensor` from its whole value:
  /// this process keeps only its workers' boxes. Throws RuntimeError on a
  /// type or shape mismatch.
  void setInput(unsigned tensor, const HostTensor &value);
  /// Sets local worker `worker`'s stored box of graph input `tensor` from
  /// `shard`, whose shape is the box's extents (getStoredBox). Throws
  /// RuntimeError for a worker not run here, a tensor the worker stores
  /// nothing of, or a wrong type or size.
  void setShard(unsigned tensor, unsigned worker, const HostTensor &shard);
  /// Local worker `worker`'s stored box of `tensor` after a step (params
  /// and state: their values for the next step), shaped as the box.
  HostTensor getShard(unsigned tensor, unsigned worker) const;
  /// Tensor `tensor` assembled from the workers' boxes after a step: every
  /// process calls it; only the root gets the values (the others the type
  /// and shape).
  HostTensor gather(unsigned tensor);

  /// Shorthands by name for f32 and i64 tensors (whole values).
  void setInput(const std::string &name, const std::vector<float> &values);
  void setInput(const std::string &name,
                const std::vector<std::int64_t> &values);
  std::vector<float> gatherFloats(const std::string &name);
  /// The loss after a step, on every process.
  double getLossValue();

  /// Runs one step on this process's workers (every process calls it).
  /// Throws RuntimeError naming the first worker that failed and why.
  StepResult runStep() { return executor->runStep(); }

private:
  /// Throws on every process when one's workers do not fit its memory.
  void checkFitsMemory();

  const GeneratedPlan &generated;
  /// Before the plan: a process running one worker (an MPI rank) derives
  /// only that worker's iteration boxes.
  LinkOptions options;
  ExecutablePlan plan;
  KernelTable kernels;
  Transport *transport = nullptr;
  std::vector<unsigned> local;
  std::unique_ptr<StepExecutor> executor;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_LINKEDPLAN_H
