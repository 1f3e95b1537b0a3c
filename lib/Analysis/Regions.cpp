//===- Regions.cpp - Concrete regions of partitioned operators ------------===//
//
// This file implements concrete interval evaluation of index programs and
// the per-worker regions built from it. It is the planner's hot path: it
// uses only the Binding's precomputed integers and fixed-size stacks. The
// interval rule itself is the runtime's (tofu/Runtime/IndexIntervals.h),
// which compiled plans evaluate over the same coefficients' values.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Regions.h"

#include "tofu/Runtime/BoxRules.h"

#include "llvm/ADT/Sequence.h"

#include <cassert>

#include <algorithm>
#include <limits>

using namespace tofu;
using namespace tofu::analysis;

namespace {

using runtime::intervals::Eval;

/// An affine form with the Binding's coefficient values (the interval
/// rule's Leaf, tofu/Runtime/IndexIntervals.h).
struct SlotLeaf {
  const Binding &binding;
  const AffineForm &form;
  int64_t constant() const { return binding.getCoefficient(form.constSlot); }
  unsigned size() const { return form.terms.size(); }
  unsigned var(unsigned i) const { return form.terms[i].var; }
  int64_t coef(unsigned i) const {
    return binding.getCoefficient(form.terms[i].coefSlot);
  }
};

/// An index program over the Binding (the interval rule's Program).
struct SlotProgram {
  const Binding &binding;
  const IndexProgram &prog;
  runtime::IndexKind kind() const { return prog.kind; }
  unsigned size() const { return prog.insts.size(); }
  runtime::IndexOp op(unsigned i) const { return prog.insts[i].op; }
  int64_t k(unsigned i) const {
    return binding.getCoefficient(prog.insts[i].operand);
  }
  SlotLeaf leaf(unsigned i) const {
    return {binding,
            binding.getAnalysis().getAffineForms()[prog.insts[i].operand]};
  }
};

/// A box of ranges by variable (the interval rule's Box).
struct RangeBox {
  ArrayRef<Range> box;
  int64_t lo(unsigned v) const { return box[v].lo; }
  int64_t hi(unsigned v) const { return box[v].hi; }
};

IndexEval toIndexEval(Eval eval) {
  switch (eval) {
  case Eval::Ok: return IndexEval::Ok;
  case Eval::Empty: return IndexEval::Empty;
  case Eval::Whole: return IndexEval::Whole;
  case Eval::Overflow: return IndexEval::Overflow;
  }
  return IndexEval::Whole;
}

/// True if some variable of `mask` has an empty range in `box`.
bool anyEmpty(uint64_t mask, ArrayRef<Range> box) {
  for (unsigned v = 0, e = box.size(); v != e; ++v)
    if ((mask >> v & 1) && box[v].empty())
      return true;
  return false;
}

/// The range of dimension `dimExtent` that index `prog` reads over `box`
/// (runtime::intervals::clipIndex); false if it reads nothing.
bool clipIndex(const Binding &binding, const IndexProgram &prog,
               ArrayRef<Range> box, int64_t dimExtent, Range &out) {
  return runtime::intervals::clipIndex(SlotProgram{binding, prog},
                                       RangeBox{box}, dimExtent, out.lo,
                                       out.hi);
}

} // namespace

bool analysis::evaluateIndexInterval(const Binding &binding,
                                     const IndexProgram &prog,
                                     ArrayRef<Range> box, int64_t dimExtent,
                                     int64_t &lo, int64_t &hi) {
  runtime::intervals::Unchecked arith;
  IndexEval result = toIndexEval(runtime::intervals::evalIndex(
      SlotProgram{binding, prog}, RangeBox{box}, arith, lo, hi));
  if (result == IndexEval::Whole) {
    lo = 0;
    hi = dimExtent - 1;
  }
  return result != IndexEval::Empty;
}

IndexEval analysis::evaluateIndexIntervalChecked(const Binding &binding,
                                                 const IndexProgram &prog,
                                                 ArrayRef<Range> box,
                                                 int64_t &lo, int64_t &hi) {
  runtime::intervals::Checked<MaxIndexMagnitude> arith;
  return toIndexEval(runtime::intervals::evalIndex(
      SlotProgram{binding, prog}, RangeBox{box}, arith, lo, hi));
}

void analysis::getFullBox(const Binding &binding, llvm::SmallVectorImpl<Range> &box) {
  ArrayRef<int64_t> extents = binding.getVarExtents();
  box.resize(extents.size());
  for (unsigned v = 0, e = extents.size(); v != e; ++v)
    box[v] = Range{0, extents[v]};
}

/// Clips every dimension of `read` to its tensor and grows `region` to
/// hold it; `region` starts out inverted (lo > hi) when nothing was read
/// yet. Leaves `region` alone if the read is empty.
static void addRead(const Binding &binding, const ReadAnalysis &read,
                    ArrayRef<Range> box, Region &region) {
  ArrayRef<int64_t> shape = binding.getInputShape(read.tensor);
  unsigned rank = read.dims.size();
  // Left uninitialized: zeroing a Range array costs more than the reads.
  int64_t inlineBounds[2 * 16];
  SmallVector<int64_t, 0> heapBounds;
  int64_t *bounds =
      rank <= 16 ? inlineBounds : (heapBounds.resize(2 * rank), heapBounds.data());
  for (unsigned d = 0; d != rank; ++d) {
    Range r;
    if (!clipIndex(binding, read.dims[d], box, shape[d], r))
      return;
    bounds[2 * d] = r.lo;
    bounds[2 * d + 1] = r.hi;
  }
  for (unsigned d = 0; d != rank; ++d) {
    region[d].lo = std::min(region[d].lo, bounds[2 * d]);
    region[d].hi = std::max(region[d].hi, bounds[2 * d + 1]);
  }
}

void analysis::computeWorkerRegions(const Binding &binding, ArrayRef<Range> box,
                                    WorkerRegions &out) {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  // Binding's overflow check covers boxes within the extents only.
  assert(box.size() == analysis.getNumVars() &&
         llvm::all_of(llvm::seq<unsigned>(0, box.size()),
                      [&](unsigned v) {
                        return box[v].empty() ||
                               (box[v].lo >= 0 &&
                                box[v].hi <= binding.getVarExtent(v));
                      }) &&
         "a box range beyond its variable's extent");
  unsigned outRank = analysis.getOutputRank();
  out.output.assign(box.begin(), box.begin() + outRank);
  unsigned numTensors = analysis.getNumTensors();
  out.inputs.resize(numTensors);
  const Range inverted{std::numeric_limits<int64_t>::max(),
                       std::numeric_limits<int64_t>::min()};
  for (unsigned t = 0; t != numTensors; ++t)
    out.inputs[t].assign(binding.getInputShape(t).size(), inverted);
  for (const ReadAnalysis &read : analysis.getReads())
    if (!anyEmpty(read.scopeMask, box))
      addRead(binding, read, box, out.inputs[read.tensor]);
  // A tensor nothing was read from is [0, 0) in every dimension.
  for (Region &region : out.inputs)
    if (!region.empty() && region[0].lo > region[0].hi)
      std::fill(region.begin(), region.end(), Range{0, 0});
}

void analysis::instantiateStrategy(const Binding &binding,
                                   const Strategy &strategy,
                                   ArrayRef<Range> parts,
                                   llvm::SmallVectorImpl<WorkerRegions> &out) {
  // Inline room for every variable an analysis may have: no allocation.
  SmallVector<Range, MaxIndexVars> box;
  getFullBox(binding, box);
  out.resize(parts.size());
  for (unsigned w = 0, e = parts.size(); w != e; ++w) {
    box[strategy.var] = parts[w];
    computeWorkerRegions(binding, box, out[w]);
    out[w].partial = strategy.kind == Strategy::Kind::Reduce;
  }
}

Range analysis::getEvenPart(Range r, unsigned n, unsigned c) {
  // The runtime's even split, which compiled plans derive boxes by.
  runtime::getEvenPart(r.lo, r.hi, n, c);
  return r;
}

void analysis::splitEvenly(int64_t extent, unsigned n,
                           llvm::SmallVectorImpl<Range> &parts) {
  parts.resize(n);
  for (unsigned w = 0; w != n; ++w)
    parts[w] = getEvenPart(Range{0, extent}, n, w);
}

void analysis::splitBySizes(ArrayRef<int64_t> sizes,
                            llvm::SmallVectorImpl<Range> &parts) {
  parts.resize(sizes.size());
  int64_t lo = 0;
  for (unsigned w = 0, e = sizes.size(); w != e; ++w) {
    parts[w] = Range{lo, lo + sizes[w]};
    lo += sizes[w];
  }
}
