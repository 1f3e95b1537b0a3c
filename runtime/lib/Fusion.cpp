//===- Fusion.cpp - Element-wise chains run block by block ----------------===//
//
// This file implements the rule that picks the fused pairs and the blocked
// loop that runs them (Fusion.h, docs/CodeGen.md "Fusion").
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Fusion.h"
#include "tofu/Runtime/Executor.h"

#include <algorithm>

using namespace tofu::runtime;
using std::int64_t;

namespace {
/// Elements per block: a's scratch block and b's reads of it stay in the
/// first-level cache (16 KiB of f32).
constexpr int64_t BlockElements = 4096;

bool hint(const std::vector<std::vector<bool>> &v, unsigned k, unsigned p) {
  return k < v.size() && p < v[k].size() && v[k][p];
}
} // namespace

std::vector<bool> tofu::runtime::findFusablePairs(
    const ExecutablePlan &plan, const Schedule &schedule,
    const FusionHints &hints, const std::vector<int> &lastUse) {
  unsigned numOps = plan.ops.size();
  std::vector<bool> fusable(numOps, false);
  auto elementwise = [&](const OpInfo &op) {
    return op.kernel < hints.elementwise.size() &&
           hints.elementwise[op.kernel] && !op.partial;
  };
  for (unsigned a = 0; a + 1 < numOps; ++a) {
    // Chains of fused pairs are not formed: a's inputs come from memory.
    if (a > 0 && fusable[a - 1])
      continue;
    const OpInfo &opA = plan.ops[a], &opB = plan.ops[a + 1];
    unsigned t = opA.output;
    const TensorInfo &info = plan.tensors[t];
    if (!elementwise(opA) || !elementwise(opB) || info.persistent ||
        lastUse[t] != int(a + 1) || info.updates >= 0)
      continue;
    if (info.shape != plan.tensors[opB.output].shape)
      continue;
    bool ok = false;
    for (unsigned p = 0; p != opB.inputs.size(); ++p) {
      if (opB.inputs[p] != t)
        continue;
      ok = hint(hints.pointwise, opB.kernel, p);
      if (!ok)
        break;
    }
    // a's output moves nowhere: no deliver to another worker, no fetch of
    // it by b from another worker.
    for (const Piece &piece : schedule.ops[a].deliver)
      ok &= piece.src == piece.dst;
    for (const Piece &piece : schedule.ops[a + 1].fetch)
      if (opB.inputs[piece.slot] == t)
        ok &= piece.src == piece.dst;
    fusable[a] = ok;
  }
  return fusable;
}

bool tofu::runtime::canFuseOnWorker(const ExecutablePlan &plan, unsigned a,
                                    unsigned w) {
  const OpInfo &opA = plan.ops[a], &opB = plan.ops[a + 1];
  const OpShare &sa = opA.workers[w], &sb = opB.workers[w];
  auto storedAs = [&](unsigned t, const Box &box) {
    const std::optional<Box> &s = plan.tensors[t].stored[w];
    return s && !s->isEmpty() && *s == box;
  };
  if (sa.output.isEmpty() || sb.output.isEmpty() ||
      !storedAs(opA.output, sa.output) || !(sa.iteration == sa.output) ||
      !(sb.iteration == sa.iteration))
    return false;
  for (unsigned p = 0; p != opA.inputs.size(); ++p)
    if (!storedAs(opA.inputs[p], sa.inputs[p]))
      return false;
  for (unsigned p = 0; p != opB.inputs.size(); ++p)
    if (opB.inputs[p] == opA.output && !(sb.inputs[p] == sa.output))
      return false;
  return true;
}

void tofu::runtime::runFusedBlocks(KernelProvider &kernels, unsigned kernelA,
                                   unsigned kernelB,
                                   std::vector<BoxView> inputsA,
                                   ElementType typeT, const KernelCall &callB,
                                   unsigned rank,
                                   const std::vector<unsigned> &slotsOfT) {
  thread_local std::vector<unsigned char> scratch;
  std::vector<int64_t> lo(callB.varLo, callB.varLo + rank),
      hi(callB.varHi, callB.varHi + rank);
  // Blocks: single indices over the dimensions before `d`, chunks of `d`,
  // whole ranges after it, with `d` the first dimension whose inner volume
  // (the dimensions after it) fits a block.
  unsigned d = rank ? rank - 1 : 0;
  int64_t innerAfter = 1;
  while (d > 0 && innerAfter * (hi[d] - lo[d]) <= BlockElements) {
    innerAfter *= hi[d] - lo[d];
    --d;
  }
  int64_t chunk = std::max<int64_t>(1, BlockElements / innerAfter);
  int64_t blockVolume =
      rank ? std::min(chunk, hi[d] - lo[d]) * innerAfter : 1;
  scratch.resize(std::size_t(blockVolume) * getElementSize(typeT));

  std::vector<int64_t> blo(lo), bhi(hi), extent(rank);
  std::vector<BoxView> inputsB(callB.inputs, callB.inputs + callB.numInputs);
  auto runBlock = [&] {
    for (unsigned e = 0; e != rank; ++e)
      extent[e] = bhi[e] - blo[e];
    BoxView block{typeT, rank, scratch.data(), blo.data(), extent.data()};
    KernelCall a{inputsA.data(), unsigned(inputsA.size()), block, blo.data(),
                 bhi.data()};
    kernels.run(kernelA, a);
    for (unsigned p : slotsOfT)
      inputsB[p] = block;
    KernelCall b{inputsB.data(), unsigned(inputsB.size()), callB.output,
                 blo.data(), bhi.data()};
    kernels.run(kernelB, b);
  };
  if (rank == 0) {
    runBlock();
    return;
  }
  // Odometer over the dimensions before d, chunks of d.
  for (unsigned e = 0; e < d; ++e)
    bhi[e] = blo[e] + 1;
  while (true) {
    for (int64_t c = lo[d]; c < hi[d]; c += chunk) {
      blo[d] = c;
      bhi[d] = std::min(hi[d], c + chunk);
      runBlock();
    }
    int e = int(d) - 1;
    while (e >= 0 && ++blo[e] == hi[e]) {
      blo[e] = lo[e];
      --e;
    }
    if (e < 0)
      return;
    for (unsigned f = e; f < d; ++f)
      bhi[f] = blo[f] + 1;
  }
}
