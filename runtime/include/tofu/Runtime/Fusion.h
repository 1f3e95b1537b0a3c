//===- Fusion.h - Element-wise chains run block by block --------*- C++ -*-===//
//
// This file declares the executor's fusion of chains of consecutive ops
// a1 -> a2 -> ... -> an where each reads the previous one's output element
// for element (docs/CodeGen.md, "Fusion"): on a worker where all run on the
// same box with nothing to fetch between them, a1..a(n-1) do not run at
// their places; at an one kernel computes the chain per element
// (KernelProvider::runFused), or one loop over cache-sized blocks of an's
// box calls each kernel on the block, each writing a scratch block the
// next reads, so the intermediates never go through memory. The plan's
// messages and the pool's allocations and releases stay those of the
// unfused step (WorkerStep::deferKernel), so the bytes moved and the
// measured peak are unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_FUSION_H
#define TOFU_RUNTIME_FUSION_H

#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/KernelProvider.h"
#include "tofu/Runtime/Schedule.h"

#include <vector>

namespace tofu {
namespace runtime {

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
  /// Per kernel: a GEMM that runs as one kernel with the next n - 1 ops,
  /// its element-wise epilogue, for every n from 2 to this (codegen
  /// emitEpilogueKernel, a prefilled GEMM); 0 or 1: none.
  std::vector<unsigned> epilogueLength;
};

/// The longest chain of ops the executor runs as one (the code generator
/// emits a fused kernel for each chain up to this length).
constexpr unsigned MaxChainLength = 8;

/// The part of the fusion rule that depends on the kernels alone, which
/// the executor (findFusableLinks) and the code generator (which emits
/// fused kernels only where it holds) share: a's and b's kernels are
/// element-wise loop nests, and b reads a's output at the input positions
/// `slotsOfT` (at least one), each only at its own index (`pointwiseB`).
inline bool fusableKernels(bool elementwiseA, bool elementwiseB,
                           const std::vector<unsigned> &slotsOfT,
                           const std::vector<bool> &pointwiseB) {
  if (!elementwiseA || !elementwiseB || slotsOfT.empty())
    return false;
  for (unsigned p : slotsOfT)
    if (p >= pointwiseB.size() || !pointwiseB[p])
      return false;
  return true;
}

/// Per op i of `plan`: whether op i may run inside op i + 1, a link of a
/// chain (the static rule of docs/CodeGen.md "Fusion": fusableKernels, i's
/// output read by i + 1 alone and neither persistent nor moved between
/// workers by the plan, neither op partial, and i reading no value that
/// an op of its chain could write over in place other than pointwise).
/// A chain may also start at a GEMM with an epilogue
/// (FusionHints::epilogueLength), which then reads nothing its chain
/// writes in place, and ends where its epilogue kernels end.
/// Consecutive links form chains; each worker then checks its own boxes
/// (canFuseOnWorker) and the pool's capacities (WorkerStep::deferKernel).
std::vector<bool> findFusableLinks(const ExecutablePlan &plan,
                                   const Schedule &schedule,
                                   const FusionHints &hints,
                                   const std::vector<int> &lastUse);

/// Whether worker `w` can run op `a` (a link) inside a + 1: every input of
/// a read where it is stored (no fetch), a's output stored as computed, a
/// + 1 reading it there, and both iterating over a's output box (a GEMM
/// over the whole range of its reduction variables).
bool canFuseOnWorker(const ExecutablePlan &plan, unsigned a, unsigned w);

/// Per op g of `plan`: the ops of a GEMM's affine epilogue that the
/// executor runs at g (docs/CodeGen.md "Fusion", "At the GEMM"), g first,
/// then the one reader of its value, that one's, and so on, as many as
/// FusionHints::epilogueLength gives; empty where there is none. Only
/// where they are not consecutive (findFusableLinks' chains run those at
/// their last op) and run early without another op noticing: each
/// intermediate value is read by the next alone, not persistent and not
/// moved; no op among them fetches from another worker; the last one's
/// output is a next value, and no op from g on other than the last reads
/// the value it replaces (whose buffer the kernel writes at g); every
/// other input of the epilogue is computed before g. Each worker then
/// checks its boxes (canRunEpilogueAtGemm).
std::vector<std::vector<unsigned>>
findEpiloguesAtGemm(const ExecutablePlan &plan, const Schedule &schedule,
                    const FusionHints &hints);

/// Whether worker `w` can run the epilogue `ops` (findEpiloguesAtGemm's)
/// at its GEMM: the GEMM iterating over its output box and its reduction's
/// whole range, each op over that box, every input read where it is
/// stored as the op reads it, and the last op writing straight over what
/// its output replaces (`inPlace`: getInPlaceUpdates').
bool canRunEpilogueAtGemm(const ExecutablePlan &plan,
                          const std::vector<unsigned> &ops, unsigned w,
                          const std::vector<bool> &inPlace);

/// Runs a chain's kernels over `fused`'s box, block by block: each op but
/// the last writes its block into a scratch block the next reads.
/// `fused.inputs` are the ops' input views in order; those at the positions
/// `readsPrevious` marks (an op's reads of the previous op's output) are
/// ignored. `fused.output` is the last op's output.
void runFusedBlocks(KernelProvider &kernels, const std::vector<ChainOp> &ops,
                    const std::vector<bool> &readsPrevious,
                    const KernelCall &fused, unsigned rank);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_FUSION_H
