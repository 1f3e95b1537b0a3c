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

#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/Transport.h"

#include <memory>
#include <optional>

namespace tofu {
namespace runtime {

/// Computes ops' shares: op kernel index -> a kernel call.
class KernelProvider {
public:
  virtual ~KernelProvider();
  /// Runs kernel `kernel` on `call`; may be called from several threads at
  /// once. Throws RuntimeError on failure.
  virtual void run(unsigned kernel, const KernelCall &call) = 0;
};

/// A KernelProvider over a table of generated kernels, one per kernel index.
class KernelTable : public KernelProvider {
public:
  explicit KernelTable(std::vector<KernelInfo> kernels)
      : kernels(std::move(kernels)) {}
  void run(unsigned kernel, const KernelCall &call) override;

private:
  std::vector<KernelInfo> kernels;
};

/// A whole tensor's values on the host, raw little-endian elements.
struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape;
  Bytes data;
};

/// What one step measured, over all workers (every process gets it).
struct StepResult {
  /// Payload bytes the transport moved between workers.
  std::int64_t movedBytes = 0;
  /// Per worker (all K), the most bytes its buffers held at once.
  std::vector<std::int64_t> peakBytesPerWorker;
};

/// Runs steps of a plan on the transport's local workers. Parameters and
/// state persist across steps. With a transport spanning several processes
/// every process makes the same calls in the same order: runStep and gather
/// exchange messages.
class Executor {
public:
  Executor(const ExecutablePlan &plan, KernelProvider &kernels,
           Transport &transport);
  ~Executor();

  /// Sets the value of graph input `tensor` (every graph input needs one
  /// before the first step; params and state keep their updated values
  /// afterwards). Throws RuntimeError on a shape or type mismatch.
  void setInput(unsigned tensor, const HostTensor &value);
  /// Runs one step on the local workers (as threads when more than one);
  /// throws RuntimeError naming the first worker that failed and why.
  StepResult runStep();
  /// The values of a tensor every worker storing it agrees on, assembled
  /// from the workers' stored boxes (after a step; not counted as moved) in
  /// the process running worker 0; other processes send their boxes there
  /// and get the tensor's type and shape with no data.
  HostTensor gather(unsigned tensor);
  /// Whether this process runs worker 0 (and so gets gather's values).
  bool isRoot() const { return workerById[0] != nullptr; }

  const Schedule &getSchedule() const { return schedule; }
  /// Testing hook: worker `worker` throws at op `op` of the next step.
  void injectFailure(unsigned worker, unsigned op);

  struct Worker;

private:
  void scatterInputs(Worker &worker);

  const ExecutablePlan &plan;
  KernelProvider &kernels;
  Transport &transport;
  Schedule schedule;
  /// The local workers, and per worker id the local one or null.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker *> workerById;
  std::vector<std::optional<HostTensor>> hostInputs;
  unsigned steps = 0;
  int failWorker = -1;
  unsigned failOp = 0;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_EXECUTOR_H
