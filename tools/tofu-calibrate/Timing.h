//===- Timing.h - What tofu-calibrate times ---------------------*- C++ -*-===//
//
// This file declares the measurements of tofu-calibrate: a kernel's call
// while other workers run theirs, a memory copy, and a message's round trip
// through a transport.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_CALIBRATE_TIMING_H
#define TOFU_TOOLS_TOFU_CALIBRATE_TIMING_H

#include "tofu/Runtime/Kernel.h"
#include "tofu/Runtime/Transport.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tofu {

/// A kernel call over whole f32 tensors.
struct KernelShape {
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
  /// The iteration box: [0, extent) per variable, in KernelCall order.
  std::vector<int64_t> varExtents;
};

/// --cpu-time: timeKernel and timeMemoryCopy count each thread's CPU time
/// times `factor` (the workers per processor thread, at least 1: what the
/// wall time of K workers sharing the cores would be on a quiet machine)
/// instead of wall time. Needs single-threaded BLAS (OPENBLAS_NUM_THREADS=1):
/// BLAS's own threads are not counted.
struct CpuTimeScale {
  static bool enabled;
  static double factor;
};

/// How many rounds timeKernel takes the best of.
constexpr unsigned KernelRounds = 7;

/// A call whose tensors take at most this many bytes runs on the same
/// tensors every time (they stay in the core's cache, as an op's small
/// inputs do in a step, produced just before); a larger one rotates
/// through copies of its tensors totalling about ColdWorkingSetBytes per
/// worker (beyond the last-level caches of the machines measured; at most
/// MaxCopies), so that it reads them from memory.
constexpr size_t HotCallBytes = size_t(1) << 20;
constexpr size_t ColdWorkingSetBytes = size_t(64) << 20;
constexpr unsigned MaxCopies = 16;

/// How the processes of an MPI job line up timeKernel's rounds: each
/// process times its own worker, every round starts in all of them at once
/// and lasts as long as its slowest process took, as a round of threads
/// lasts as long as its slowest thread (else each rank's best round is
/// one the scheduler happened to give it a core for, and K ranks on fewer
/// cores look as fast as one).
struct ProcessRounds {
  /// Returns once every process has called it.
  std::function<void()> barrier;
  /// The largest of the processes' values.
  std::function<double(double)> max;
};

/// Seconds of one call of `fn` over `shape` while `threads` threads (this
/// process's workers) each call it at once on their own tensors: the
/// slowest thread's time per call, the best of KernelRounds rounds of
/// calls lasting about `roundSeconds` each (cold or hot, as above). With
/// `processes`, the slowest over every process's threads, the rounds
/// lined up across processes.
double timeKernel(runtime::KernelFn fn, const KernelShape &shape,
                  unsigned threads, double roundSeconds,
                  const ProcessRounds *processes = nullptr);

/// Bytes per second one thread copies (memcpy of 64 MiB) while `threads`
/// threads each copy their own buffer at once.
double timeMemoryCopy(unsigned threads);

/// The average round trip, in seconds, of a `bytes`-byte message from
/// worker `self` to worker `peer` and back through `transport` (tags from
/// `tag` up): `self` sends first, `peer` (in another thread or process)
/// calls it with the roles swapped and `first` false.
double timeRoundTrip(runtime::Transport &transport, unsigned self,
                     unsigned peer, bool first, size_t bytes, unsigned trips,
                     uint64_t tag);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_CALIBRATE_TIMING_H
