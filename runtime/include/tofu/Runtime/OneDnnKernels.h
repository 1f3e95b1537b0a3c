//===- OneDnnKernels.h - Convolutions, batch norms, pooling on oneDNN -*- C++ -*-===//
//
// This file declares how the CPU runtime computes a kernel the generator
// described as one library problem (the descriptions of the cuDNN path:
// DeviceConv.h, DeviceBatchNorm.h, DevicePooling.h) with oneDNN instead of
// the generated loops. The rule for "this box is one library call" is the
// device path's: planConvolution, planBatchNorm and planPooling; when they
// give none (a partial window, a `reduce` share of batch-norm statistics,
// padding that differs before and after, ...) or the elements are not f32,
// the caller runs the generated kernel. Library TofuRuntimeDNNL, built only
// where CMake finds oneDNN (docs/Runtime.md, "Kernels").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_ONEDNNKERNELS_H
#define TOFU_RUNTIME_ONEDNNKERNELS_H

#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Runtime/DevicePooling.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// Per kernel index, the library problem the generator described, if any.
struct LibraryProblems {
  std::vector<std::optional<DeviceConv>> convs;
  std::vector<std::optional<DeviceBatchNorm>> batchNorms;
  std::vector<std::optional<DevicePooling>> poolings;
};

/// How many kernel calls oneDNN computed, by problem, and how many calls of
/// described kernels fell back to the generated kernel.
struct OneDnnCounts {
  std::uint64_t convForward = 0, convBackwardData = 0, convBackwardFilter = 0,
                batchNorm = 0, pooling = 0, fallbacks = 0;
  std::uint64_t total() const {
    return convForward + convBackwardData + convBackwardFilter + batchNorm +
           pooling;
  }
};

/// Computes the described kernels' calls with oneDNN (CPU engine).
/// `run` may be called from several threads at once.
class OneDnnKernels {
public:
  /// `threadsPerWorker` > 0: each call runs on that many OpenMP threads
  /// (oneDNN's CPU runtime; set in the calling thread); 0 leaves oneDNN's
  /// default (OMP_NUM_THREADS, else every core).
  OneDnnKernels(LibraryProblems problems, unsigned threadsPerWorker);
  ~OneDnnKernels();

  /// Computes `call` of kernel `kernel` as one oneDNN primitive and returns
  /// true, or returns false (nothing written) when the kernel has no
  /// description, its box is not one library problem, or it is not f32.
  /// Throws RuntimeError when oneDNN fails.
  bool run(unsigned kernel, const KernelCall &call);

  /// The calls so far (every thread's).
  OneDnnCounts getCounts() const;

  /// How many kernels have a description.
  unsigned getNumDescribed() const;

  /// "oneDNN 2.6.3" (the library loaded at run time).
  static std::string getVersion();

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_ONEDNNKERNELS_H
