//===- Fusion.h - Element-wise chains run block by block --------*- C++ -*-===//
//
// This file declares the executor's fusion of two consecutive ops a -> b
// where b reads a's output t element for element (docs/CodeGen.md,
// "Fusion"): on a worker where both run on the same box with nothing to
// fetch between them, a's kernel does not run at a; at b one loop over
// cache-sized blocks of b's box calls a's kernel into a scratch block and
// b's kernel reading it, so t never goes through memory. The plan's
// messages and the pool's allocations and releases stay those of the
// unfused step (FusionState below), so the bytes moved and the measured
// peak are unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_FUSION_H
#define TOFU_RUNTIME_FUSION_H

#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/Kernel.h"
#include "tofu/Runtime/Schedule.h"

#include <vector>

namespace tofu {
namespace runtime {

class KernelProvider;

/// What the kernel provider says about its kernels, by kernel index.
struct FusionHints {
  /// The kernel is a loop nest without reductions whose variables are the
  /// output's: it may run on any sub-box of its output into a box of that
  /// size (codegen KernelKind::Elementwise).
  std::vector<bool> elementwise;
  /// Per kernel, per input position: the kernel reads that input only at
  /// the output element's own index (codegen
  /// GeneratedKernel::pointwiseInputs).
  std::vector<std::vector<bool>> pointwise;
};

/// Per op i of `plan`: whether op i may run inside op i + 1 (the static
/// rule of docs/CodeGen.md "Fusion": i + 1 element-wise and reading i's
/// output only at its own index, that output read by no other op and
/// neither persistent nor moved between workers by the plan, neither op
/// partial). Each worker then checks its own boxes (canFuseOnWorker).
std::vector<bool> findFusablePairs(const ExecutablePlan &plan,
                                   const Schedule &schedule,
                                   const FusionHints &hints,
                                   const std::vector<int> &lastUse);

/// Whether worker `w` can run op `a` (fusable with a + 1) inside a + 1:
/// every input of both ops other than a's output read where it is stored
/// (no fetch), a's output stored as computed, and both iterating over the
/// same box.
bool canFuseOnWorker(const ExecutablePlan &plan, unsigned a, unsigned w);

/// Runs op a's kernel and op b's over `callB`'s box, block by block:
/// `inputsA` are a's input views, `slotsOfT` the input positions of b
/// reading a's output (their views in callB are ignored).
void runFusedBlocks(KernelProvider &kernels, unsigned kernelA,
                    unsigned kernelB, std::vector<BoxView> inputsA,
                    ElementType typeT, const KernelCall &callB,
                    unsigned rank, const std::vector<unsigned> &slotsOfT);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_FUSION_H
