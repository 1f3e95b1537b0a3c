//===- KernelTimes.h - What each op's kernel took on a device ---*- C++ -*-===//
//
// This file declares the per-op device times a device fills when asked
// (CudaOptions::times, tofu-run --kernel-times): every launch is bracketed
// by two events on its worker's stream, and each synchronize that ends a
// round of launches (a step) adds the elapsed times up per op. Kept per op is
// the fastest round: the first step pays for lazy module loading and library
// set-up, which fall between the events. With several workers on one GPU
// (virtual workers) their streams run concurrently and each op's time
// includes the others' interference.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_KERNELTIMES_H
#define TOFU_RUNTIME_KERNELTIMES_H

#include <vector>

namespace tofu {
namespace runtime {

/// Which implementation ran an op's kernel.
enum class KernelLibrary { Generated, CuBlas, CuDnn };

const char *getKernelLibraryName(KernelLibrary library);

struct KernelTimes {
  /// Per kernel index (the op's index): the device seconds of its launches
  /// in its fastest round, the launches in a round, and what ran the last.
  std::vector<double> seconds;
  std::vector<unsigned> launches;
  std::vector<KernelLibrary> library;
  /// Rounds added up so far.
  unsigned rounds = 0;

  /// Adds one round: per kernel index, its seconds and launches (0: not
  /// launched in this round).
  void addRound(const std::vector<double> &roundSeconds,
                const std::vector<unsigned> &roundLaunches,
                const std::vector<KernelLibrary> &roundLibrary);
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_KERNELTIMES_H
