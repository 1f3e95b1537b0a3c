//===- Executor.h - Run an ExecutablePlan on K workers ----------*- C++ -*-===//
//
// This file declares the executor: K workers, each running its share of
// every op in graph order (fetch the input boxes, call the kernel, deliver
// or reduce the output), then moving updated parameters into their
// parameters' storage for the next step. Kernels come from a
// KernelProvider, bytes go through a Transport; an executor runs the
// transport's local workers (all K in one process, as threads, or one per
// MPI rank). docs/Runtime.md describes the schedule and how bytes and peak
// memory are measured.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_EXECUTOR_H
#define TOFU_RUNTIME_EXECUTOR_H

#include "tofu/Runtime/Fusion.h"
#include "tofu/Runtime/InputShards.h"
#include "tofu/Runtime/KernelProvider.h"
#include "tofu/Runtime/Liveness.h"
#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/Transport.h"

#include <functional>
#include <memory>
#include <optional>

namespace tofu {
namespace runtime {

/// A whole tensor's values on the host, raw little-endian elements.
struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape;
  Bytes data;
};

/// Where one worker's wall time in a step went, in seconds, and how it
/// ordered its exchanges (docs/Runtime.md, "Overlap").
struct WorkerTimes {
  /// Running kernels.
  double compute = 0;
  /// Moving pieces: local copies, packing and unpacking, staging, handing
  /// messages to the transport and posting receives.
  double comm = 0;
  /// Inside the transport's receive: waiting for a message to arrive and
  /// taking it.
  double wait = 0;
  /// The worker's whole step, its ops and the next-step pieces.
  double step = 0;
  /// Phases in which getMessages' order has the worker receive before it
  /// sends: those it took its sends first in (every staging buffer of the
  /// phase reused a kept one, so the order leaves its pool as it was), and
  /// those it kept in getMessages' order.
  std::int64_t sendsFirst = 0;
  std::int64_t receivesFirst = 0;
};

/// One timed span of a worker's step (Executor::setTrace). Times are
/// std::chrono::steady_clock seconds, one clock for every process of a
/// machine, so the spans of MPI ranks on one machine compare.
struct TraceEvent {
  enum Kind { Kernel, Wait, Send };
  Kind kind = Kernel;
  unsigned worker = 0;
  /// The op (the number of ops for the next-step pieces).
  unsigned op = 0;
  /// 0 fetch, 1 reduce, 2 deliver, 3 next step (Wait and Send).
  unsigned phase = 0;
  /// The other worker of a Wait (the sender) or a Send (the receiver).
  unsigned peer = 0;
  double start = 0;
  double end = 0;
};

/// What one step measured, over all workers (every process gets it).
struct StepResult {
  /// Payload bytes the transport moved between workers.
  std::int64_t movedBytes = 0;
  /// Per worker (all K), the most bytes its buffers held at once.
  std::vector<std::int64_t> peakBytesPerWorker;
  /// Per worker (all K), the most bytes its pool held at once: live
  /// buffers and the free ones whose memory it kept (with trimming, at
  /// most the most peakBytesPerWorker so far, FreeList.h).
  std::vector<std::int64_t> heldBytesPerWorker;
  /// Per worker (all K), where its time went; all zero from an executor
  /// that does not measure it (the device executor).
  std::vector<WorkerTimes> timesPerWorker;
};

/// What runs steps of a plan: the CPU Executor below or the device
/// executor (DeviceExecutor.h). Parameters and state persist across steps.
class StepExecutor {
public:
  virtual ~StepExecutor();
  /// Sets the value of graph input `tensor` (every graph input needs one
  /// before the first step; params and state keep their updated values
  /// afterwards). Throws RuntimeError on a shape or type mismatch.
  virtual void setInput(unsigned tensor, const HostTensor &value) = 0;
  /// Sets local worker `worker`'s stored box of graph input `tensor` from
  /// `values`, the box's elements in row-major order (InputShards.h: the
  /// latest of setInput and setInputShard holds). Throws RuntimeError.
  virtual void setInputShard(unsigned tensor, unsigned worker,
                             Bytes values) = 0;
  /// The elements of local worker `worker`'s stored box of `tensor` after
  /// a step (params and state: their values for the next step); throws
  /// RuntimeError where the worker is not local or holds none of it now.
  virtual Bytes readShard(unsigned tensor, unsigned worker) = 0;
  /// Runs one step on this process's workers; throws RuntimeError naming
  /// the first worker that failed and why.
  virtual StepResult runStep() = 0;
  /// The values of a tensor every worker storing it agrees on, assembled
  /// from the workers' stored boxes (after a step; not counted as moved).
  /// Where the workers span processes, every process calls it and only the
  /// one running worker 0 gets the values (the others the type and shape).
  virtual HostTensor gather(unsigned tensor) = 0;
  /// Whether this process runs worker 0, and so gets gather's values.
  virtual bool isRoot() const { return true; }
  virtual const Schedule &getSchedule() const = 0;
  /// Testing hook: worker `worker` throws at op `op` of the next step.
  virtual void injectFailure(unsigned worker, unsigned op) = 0;
  /// How many ops ahead workers post their receives (Executor's; others
  /// ignore it).
  virtual void setPrefetchDepth(unsigned) {}
  /// Whether a worker may take a phase's sends before its receives where
  /// its pool's peak stays the same (Executor's, on by default; others
  /// ignore it).
  virtual void setSendsFirst(bool) {}
  /// Whether the next steps record every kernel call, receive wait and
  /// send of this process's workers (getTrace; off by default; Executor's,
  /// others record nothing).
  virtual void setTrace(bool) {}
  /// The last step's spans of this process's workers, by worker, in the
  /// order they happened.
  virtual std::vector<TraceEvent> getTrace() const { return {}; }
  /// Fuses chains of element-wise ops from the next step on (Fusion.h);
  /// empty hints (the default) fuse nothing. Executor's; others ignore it.
  virtual void setFusion(const FusionHints &) {}
  /// The fused chains the last step ran, over this process's workers, and
  /// the ops in them.
  virtual unsigned getNumFused() const { return 0; }
  virtual unsigned getNumFusedOps() const { return 0; }
  /// The next values the last step's kernels computed straight into the
  /// buffers of what they replace, with no workspace and no copy
  /// (InPlaceUpdates.h: writesOverReplaced), over this process's workers.
  virtual unsigned getNumDirectUpdates() const { return 0; }
};

/// Checks `value` against graph input `tensor` of `plan`; throws
/// RuntimeError on a shape, type or size mismatch.
void checkInput(const ExecutablePlan &plan, unsigned tensor,
                const HostTensor &value);

/// Assembles tensor `tensor` of `plan` from the workers' stored boxes:
/// `held[w]` is worker w's box on the host, or null if it holds none.
HostTensor assembleTensor(const ExecutablePlan &plan, unsigned tensor,
                          const std::vector<const unsigned char *> &held);

/// The workers of `plan` that `transport` runs in this process, in
/// increasing order; throws RuntimeError when one is not a worker of the
/// plan, runs twice, or there is none.
std::vector<unsigned> getLocalWorkers(const ExecutablePlan &plan,
                                      const Transport &transport);

/// A step's counts over every process: each passes the bytes its workers
/// moved, its local workers' peaks and most held bytes (worker, bytes) and
/// their times (worker, times); all get the sums.
StepResult sumStepResult(
    Transport &transport, unsigned workers, std::int64_t movedBytes,
    const std::vector<std::pair<unsigned, std::int64_t>> &localPeaks,
    const std::vector<std::pair<unsigned, std::int64_t>> &localHeld,
    const std::vector<std::pair<unsigned, WorkerTimes>> &localTimes = {});

/// Executor::gather's exchange, shared by the executors: the process of
/// worker 0 assembles tensor `tensor` from its local workers' values and
/// those the other processes send it (uncounted, tagged with `step`); the
/// others send theirs and get the type and shape. `local(w)`, for a local
/// worker w storing a box of the tensor, is that box's values on the host,
/// or null when w does not hold the tensor now.
HostTensor gatherTensor(const ExecutablePlan &plan, unsigned tensor,
                        Transport &transport, unsigned step,
                        const std::function<const unsigned char *(unsigned)>
                            &local);

/// Validates `plan`, checks that the `what` (transport, device) running it
/// has `workers` workers as the plan does, and builds its schedule (with
/// `worker` one of the plan's workers, only that worker's pieces:
/// buildWorkerSchedule); throws RuntimeError naming the problem.
Schedule checkAndSchedule(const ExecutablePlan &plan, const char *what,
                          unsigned workers, int worker = -1);

/// Runs steps of a plan on the transport's local workers (as threads when
/// more than one), exchanging bytes through the Transport. With a transport
/// spanning several processes every process makes the same calls in the
/// same order: runStep and gather exchange messages.
class Executor : public StepExecutor {
public:
  Executor(const ExecutablePlan &plan, KernelProvider &kernels,
           Transport &transport);
  ~Executor() override;

  void setInput(unsigned tensor, const HostTensor &value) override;
  void setInputShard(unsigned tensor, unsigned worker, Bytes values) override;
  Bytes readShard(unsigned tensor, unsigned worker) override;
  StepResult runStep() override;
  HostTensor gather(unsigned tensor) override;
  const Schedule &getSchedule() const override { return schedule; }
  void injectFailure(unsigned worker, unsigned op) override;
  bool isRoot() const override { return workerById[0] != nullptr; }
  /// How many ops ahead a worker posts its fetch receives
  /// (Transport::postReceive) before it computes: 1 (the default) posts
  /// op i+1's, and op i's reduce and deliver receives, before op i's
  /// kernel; 0 posts none. The pool's buffers, and so the peak, do not
  /// depend on it.
  void setPrefetchDepth(unsigned ops) override { prefetchDepth = ops; }
  void setSendsFirst(bool on) override { sendsFirst = on; }
  void setTrace(bool on) override { trace = on; }
  std::vector<TraceEvent> getTrace() const override;
  void setFusion(const FusionHints &hints) override;
  unsigned getNumFused() const override;
  unsigned getNumFusedOps() const override;
  unsigned getNumDirectUpdates() const override;

  struct Worker;

private:
  void scatterInputs(Worker &worker);

  const ExecutablePlan &plan;
  /// The plan's liveness, once for every step.
  Liveness liveness;
  KernelProvider &kernels;
  Transport &transport;
  Schedule schedule;
  /// The local workers, and per worker id the local one or null.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker *> workerById;
  std::unique_ptr<InputShards> inputs;
  unsigned steps = 0;
  int failWorker = -1;
  unsigned failOp = 0;
  unsigned prefetchDepth = 1;
  bool sendsFirst = true;
  bool trace = false;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_EXECUTOR_H
