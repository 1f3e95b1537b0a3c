//===- KernelProvider.h - Where the executors' kernels come from -*- C++ -*-===//
//
// This file declares KernelProvider, which computes an op's share on a
// KernelCall (Kernel.h) for the executors (Executor.h, and the host
// emulation of a Device, Device.h), alone or as a fused chain of ops
// (Fusion.h), and KernelTable, a provider over a table of generated
// kernels. It depends on the kernel ABI alone, so that the fusion rule and
// the devices need no executor.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_KERNELPROVIDER_H
#define TOFU_RUNTIME_KERNELPROVIDER_H

#include "tofu/Runtime/Kernel.h"

#include <vector>

namespace tofu {
namespace runtime {

/// One op of a chain run by runFusedBlocks (Fusion.h) or
/// KernelProvider::runFused.
struct ChainOp {
  unsigned kernel;
  /// Its inputs' number in the chain's call (the ops' inputs in order).
  unsigned numInputs;
  /// Its output's element type.
  ElementType outputType;
};

/// Computes ops' shares: op kernel index -> a kernel call.
class KernelProvider {
public:
  virtual ~KernelProvider();
  /// Runs kernel `kernel` on `call`; may be called from several threads at
  /// once. Throws RuntimeError on failure.
  virtual void run(unsigned kernel, const KernelCall &call) = 0;
  /// Runs the fused chain `chain` (Fusion.h) as one kernel on `call`: its
  /// inputs are the ops' in order (an op's views of the previous op's
  /// output are not read), its output and box the last op's. Returns
  /// false, having run nothing, where the provider has no such kernel for
  /// the chain or the call (the executor then runs the blocks).
  virtual bool runFused(const std::vector<ChainOp> &chain,
                        const KernelCall &call) {
    (void)chain, (void)call;
    return false;
  }
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

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_KERNELPROVIDER_H
