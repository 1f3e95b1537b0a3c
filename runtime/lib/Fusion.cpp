//===- Fusion.cpp - Element-wise chains run block by block ----------------===//
//
// This file implements the rule that picks the links of fused chains and
// the blocked loop that runs a chain (Fusion.h, docs/CodeGen.md "Fusion").
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Fusion.h"
#include "tofu/Runtime/InPlaceUpdates.h"

#include <algorithm>

using namespace tofu::runtime;
using std::int64_t;

namespace {
/// Elements per block: a's scratch block and b's reads of it stay in the
/// first-level cache (16 KiB of f32).
constexpr int64_t BlockElements = 4096;
} // namespace

std::vector<bool> tofu::runtime::findFusableLinks(
    const ExecutablePlan &plan, const Schedule &schedule,
    const FusionHints &hints, const std::vector<int> &lastUse) {
  unsigned numOps = plan.ops.size();
  std::vector<bool> fusable(numOps, false);
  auto elementwise = [&](const OpInfo &op) {
    return op.kernel < hints.elementwise.size() &&
           hints.elementwise[op.kernel] && !op.partial;
  };
  auto epilogueLength = [&](const OpInfo &op) {
    return op.kernel < hints.epilogueLength.size() && !op.partial
               ? hints.epilogueLength[op.kernel]
               : 0u;
  };
  // Per tensor: the op whose output replaces it (its next value), or -1.
  std::vector<int> replacedAt(plan.tensors.size(), -1);
  for (unsigned i = 0; i != numOps; ++i)
    if (int p = plan.tensors[plan.ops[i].output].updates; p >= 0)
      replacedAt[p] = int(i);
  std::vector<unsigned> slots, ends;
  const std::vector<bool> noHints;
  for (unsigned a = 0; a + 1 < numOps; ++a) {
    const OpInfo &opA = plan.ops[a], &opB = plan.ops[a + 1];
    unsigned t = opA.output;
    const TensorInfo &info = plan.tensors[t];
    if (info.persistent || lastUse[t] != int(a + 1) || info.updates >= 0 ||
        info.shape != plan.tensors[opB.output].shape)
      continue;
    slots.clear();
    for (unsigned p = 0; p != opB.inputs.size(); ++p)
      if (opB.inputs[p] == t)
        slots.push_back(p);
    unsigned epilogue = epilogueLength(opA);
    if (!fusableKernels(elementwise(opA) || epilogue >= 2, elementwise(opB),
                        slots,
                        opB.kernel < hints.pointwise.size()
                            ? hints.pointwise[opB.kernel]
                            : noHints))
      continue;
    bool ok = true;
    // a's output moves nowhere: no deliver to another worker, no fetch of
    // it by b from another worker.
    for (const Piece &piece : schedule.ops[a].deliver)
      ok &= piece.src == piece.dst;
    for (const Piece &piece : schedule.ops[a + 1].fetch)
      if (opB.inputs[piece.slot] == t)
        ok &= piece.src == piece.dst;
    // An op of a's chain after a + 1 may write a value a reads over it in
    // place (InPlaceUpdates.h, which checks a + 1 itself): a must read it
    // only pointwise, so that each block reads it before it is written.
    // A GEMM reads its inputs after its epilogue has written its output
    // (emitEpilogueKernel): no op of its chain may write over them.
    for (unsigned p = 0; p != opA.inputs.size(); ++p) {
      int j = replacedAt[opA.inputs[p]];
      bool inChain = j >= int(a + 1) && j < int(a + MaxChainLength);
      ok &= epilogue >= 2 ? !inChain
                          : !(inChain && j > int(a + 1)) ||
                                readsPointwise(opA, p);
    }
    fusable[a] = ok;
    // The chain from the GEMM ends where its epilogue kernels do, if
    // they are consecutive ops (else it ends where they stop being).
    bool consecutive = true;
    for (unsigned k = a; consecutive && k + 1 < a + epilogue && k + 1 < numOps;
         ++k) {
      const std::vector<unsigned> &in = plan.ops[k + 1].inputs;
      consecutive = std::find(in.begin(), in.end(), plan.ops[k].output) !=
                    in.end();
    }
    if (ok && epilogue >= 2 && consecutive && a + epilogue - 1 < numOps)
      ends.push_back(a + epilogue - 1);
  }
  for (unsigned e : ends)
    fusable[e] = false;
  return fusable;
}

std::vector<std::vector<unsigned>> tofu::runtime::findEpiloguesAtGemm(
    const ExecutablePlan &plan, const Schedule &schedule,
    const FusionHints &hints) {
  unsigned numOps = plan.ops.size(), numTensors = plan.tensors.size();
  std::vector<std::vector<unsigned>> epilogues(numOps);
  // Per tensor: the one op reading it (-1: none, -2: several), and the op
  // computing it (-1: none, a graph input or a parameter's first value).
  std::vector<int> reader(numTensors, -1), producer(numTensors, -1);
  for (unsigned i = 0; i != numOps; ++i) {
    for (unsigned t : plan.ops[i].inputs)
      reader[t] = reader[t] == -1 || reader[t] == int(i) ? int(i) : -2;
    producer[plan.ops[i].output] = int(i);
  }
  auto elementwise = [&](const OpInfo &op) {
    return op.kernel < hints.elementwise.size() &&
           hints.elementwise[op.kernel] && !op.partial;
  };
  auto local = [](const std::vector<Piece> &pieces) {
    return std::all_of(pieces.begin(), pieces.end(), [](const Piece &piece) {
      return piece.src == piece.dst;
    });
  };
  for (unsigned g = 0; g != numOps; ++g) {
    const OpInfo &gemm = plan.ops[g];
    unsigned length = gemm.kernel < hints.epilogueLength.size() && !gemm.partial
                          ? hints.epilogueLength[gemm.kernel]
                          : 0;
    if (length < 2)
      continue;
    std::vector<unsigned> ops{g};
    bool ok = local(schedule.ops[g].fetch);
    while (ok && ops.size() < length) {
      unsigned t = plan.ops[ops.back()].output;
      int u = reader[t];
      ok = u > int(ops.back()) && !plan.tensors[t].persistent &&
           elementwise(plan.ops[u]) && local(schedule.ops[ops.back()].deliver) &&
           local(schedule.ops[u].fetch);
      if (!ok)
        break;
      unsigned kernel = plan.ops[u].kernel;
      for (unsigned p = 0; p != plan.ops[u].inputs.size(); ++p)
        if (plan.ops[u].inputs[p] == t)
          ok &= kernel < hints.pointwise.size() &&
                p < hints.pointwise[kernel].size() &&
                hints.pointwise[kernel][p];
      ops.push_back(unsigned(u));
    }
    // Consecutive ops are findFusableLinks' chain.
    unsigned last = ops.back();
    if (!ok || last == g + length - 1)
      continue;
    int replaced = plan.tensors[plan.ops[last].output].updates;
    ok = replaced >= 0;
    for (unsigned j = g; ok && j < last; ++j)
      for (unsigned t : plan.ops[j].inputs)
        ok &= int(t) != replaced;
    for (unsigned k = 1; ok && k != ops.size(); ++k)
      for (unsigned t : plan.ops[ops[k]].inputs)
        ok &= t == plan.ops[ops[k - 1]].output || producer[t] < int(g);
    if (ok)
      epilogues[g] = std::move(ops);
  }
  return epilogues;
}

bool tofu::runtime::canRunEpilogueAtGemm(const ExecutablePlan &plan,
                                         const std::vector<unsigned> &ops,
                                         unsigned w,
                                         const std::vector<bool> &inPlace) {
  auto storedAs = [&](unsigned t, const Box &box) {
    const std::optional<Box> &s = plan.tensors[t].stored[w];
    return s && !s->isEmpty() && *s == box;
  };
  const OpInfo &gemm = plan.ops[ops.front()];
  const OpShare &sg = gemm.workers[w];
  unsigned rank = sg.output.getRank();
  if (sg.output.isEmpty() || !storedAs(gemm.output, sg.output) ||
      sg.iteration.getRank() < rank)
    return false;
  for (unsigned d = 0; d != sg.iteration.getRank(); ++d)
    if (d < rank ? sg.iteration.lo[d] != sg.output.lo[d] ||
                       sg.iteration.hi[d] != sg.output.hi[d]
                 : sg.iteration.lo[d] != 0)
      return false;
  for (unsigned p = 0; p != gemm.inputs.size(); ++p)
    if (!storedAs(gemm.inputs[p], sg.inputs[p]))
      return false;
  for (unsigned k = 1; k != ops.size(); ++k) {
    const OpInfo &op = plan.ops[ops[k]];
    const OpShare &share = op.workers[w];
    unsigned previous = plan.ops[ops[k - 1]].output;
    if (!(share.output == sg.output) || !(share.iteration == sg.output))
      return false;
    for (unsigned p = 0; p != op.inputs.size(); ++p)
      if (op.inputs[p] == previous ? !(share.inputs[p] == sg.output)
                                   : !storedAs(op.inputs[p], share.inputs[p]))
        return false;
  }
  // The last op writes over what it replaces, stored as its output box.
  unsigned last = ops.back();
  int replaced = plan.tensors[plan.ops[last].output].updates;
  return getOutputPlace(plan, last, w, inPlace).overReplaced &&
         replaced >= 0 && storedAs(unsigned(replaced), sg.output);
}

bool tofu::runtime::canFuseOnWorker(const ExecutablePlan &plan, unsigned a,
                                    unsigned w) {
  const OpInfo &opA = plan.ops[a], &opB = plan.ops[a + 1];
  const OpShare &sa = opA.workers[w], &sb = opB.workers[w];
  auto storedAs = [&](unsigned t, const Box &box) {
    const std::optional<Box> &s = plan.tensors[t].stored[w];
    return s && !s->isEmpty() && *s == box;
  };
  // a's iteration box is its output box, followed (a GEMM) by its
  // reduction variables' ranges from 0, which are whole (a is not partial).
  unsigned rank = sa.output.getRank();
  bool iteratesOutput = sa.iteration.getRank() >= rank;
  for (unsigned d = 0; iteratesOutput && d != sa.iteration.getRank(); ++d)
    iteratesOutput = d < rank ? sa.iteration.lo[d] == sa.output.lo[d] &&
                                    sa.iteration.hi[d] == sa.output.hi[d]
                              : sa.iteration.lo[d] == 0;
  if (sa.output.isEmpty() || sb.output.isEmpty() ||
      !storedAs(opA.output, sa.output) || !iteratesOutput ||
      !(sb.iteration == sa.output))
    return false;
  for (unsigned p = 0; p != opA.inputs.size(); ++p)
    if (!storedAs(opA.inputs[p], sa.inputs[p]))
      return false;
  for (unsigned p = 0; p != opB.inputs.size(); ++p)
    if (opB.inputs[p] == opA.output && !(sb.inputs[p] == sa.output))
      return false;
  return true;
}

void tofu::runtime::runFusedBlocks(KernelProvider &kernels,
                                   const std::vector<ChainOp> &ops,
                                   const std::vector<bool> &readsPrevious,
                                   const KernelCall &fused, unsigned rank) {
  // Two scratch blocks, each op writing the one the op before it did not.
  thread_local std::vector<unsigned char> scratch[2];
  thread_local std::vector<BoxView> inputs;
  thread_local std::vector<int64_t> lo, hi, blo, bhi, extent;
  lo.assign(fused.varLo, fused.varLo + rank);
  hi.assign(fused.varHi, fused.varHi + rank);
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
  unsigned widest = 1;
  for (unsigned k = 0; k + 1 < ops.size(); ++k)
    widest = std::max(widest, getElementSize(ops[k].outputType));
  for (std::vector<unsigned char> &s : scratch)
    s.resize(std::size_t(blockVolume) * widest);

  blo = lo;
  bhi = hi;
  extent.resize(rank);
  inputs.assign(fused.inputs, fused.inputs + fused.numInputs);
  auto runBlock = [&] {
    for (unsigned e = 0; e != rank; ++e)
      extent[e] = bhi[e] - blo[e];
    BoxView previous{};
    unsigned first = 0;
    for (unsigned k = 0; k != ops.size(); ++k) {
      const ChainOp &op = ops[k];
      for (unsigned p = first; p != first + op.numInputs; ++p)
        if (readsPrevious[p])
          inputs[p] = previous;
      bool last = k + 1 == ops.size();
      BoxView out = last ? fused.output
                         : BoxView{op.outputType, rank, scratch[k % 2].data(),
                                   blo.data(), extent.data()};
      KernelCall call{inputs.data() + first, op.numInputs, out, blo.data(),
                      bhi.data()};
      kernels.run(op.kernel, call);
      previous = out;
      first += op.numInputs;
    }
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
