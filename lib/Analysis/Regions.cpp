//===- Regions.cpp - Concrete regions of partitioned operators ------------===//
//
// This file implements concrete interval evaluation of index programs and
// the per-worker regions built from it. It is the planner's hot path: it
// uses only the Binding's precomputed integers and fixed-size stacks.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Regions.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>

#include <algorithm>
#include <limits>

using namespace tofu;
using namespace tofu::analysis;

namespace {

/// The integer arithmetic of interval evaluation. Unchecked on the
/// planner's path, where Binding has proved that every bound over the full
/// extents stays within ±MaxIndexMagnitude; checked (every result of every
/// step compared against that limit) when the proof is made, and by callers
/// whose ranges go beyond the bound extents (shape inference).
template <bool Checked> struct Arith {
  bool overflow = false;

  int64_t check(int64_t r, bool wrapped) {
    if constexpr (!Checked)
      return r;
    overflow |= wrapped || r > MaxIndexMagnitude || r < -MaxIndexMagnitude;
    return r;
  }
  int64_t add(int64_t a, int64_t b) {
    if constexpr (!Checked)
      return a + b;
    int64_t r;
    bool wrapped = llvm::AddOverflow(a, b, r);
    return check(r, wrapped);
  }
  int64_t sub(int64_t a, int64_t b) {
    if constexpr (!Checked)
      return a - b;
    int64_t r;
    bool wrapped = llvm::SubOverflow(a, b, r);
    return check(r, wrapped);
  }
  int64_t mul(int64_t a, int64_t b) {
    if constexpr (!Checked)
      return a * b;
    int64_t r;
    bool wrapped = llvm::MulOverflow(a, b, r);
    return check(r, wrapped);
  }
};

/// The closed interval of an affine form over `box`. Returns false if a
/// variable it uses has an empty range.
template <bool Checked>
bool evalAffine(const Binding &binding, const AffineForm &form,
                ArrayRef<Range> box, Arith<Checked> &arith, int64_t &lo,
                int64_t &hi) {
  lo = hi = arith.check(binding.getCoefficient(form.constSlot), false);
  for (const AffineForm::Term &term : form.terms) {
    const Range &r = box[term.var];
    if (r.empty())
      return false;
    int64_t c = binding.getCoefficient(term.coefSlot);
    int64_t a = arith.mul(c, r.lo), b = arith.mul(c, arith.sub(r.hi, 1));
    lo = arith.add(lo, std::min(a, b));
    hi = arith.add(hi, std::max(a, b));
  }
  return true;
}

/// Divides or reduces [lo, hi] by `k`; Whole if k is not positive.
IndexEval evalDivRem(bool isDiv, int64_t k, int64_t &lo, int64_t &hi) {
  if (k <= 0)
    return IndexEval::Whole;
  int64_t qlo = floorDiv(lo, k), qhi = floorDiv(hi, k);
  if (isDiv) {
    lo = qlo;
    hi = qhi;
  } else if (qlo == qhi) {
    lo = floorMod(lo, k);
    hi = floorMod(hi, k);
  } else {
    lo = 0;
    hi = k - 1;
  }
  return IndexEval::Ok;
}

template <bool Checked>
IndexEval runProgram(const Binding &binding, const IndexProgram &prog,
                     ArrayRef<Range> box, int64_t &outLo, int64_t &outHi) {
  if (prog.kind == IndexProgram::Kind::Whole)
    return IndexEval::Whole;
  Arith<Checked> arith;
  ArrayRef<AffineForm> forms = binding.getAnalysis().getAffineForms();
  // Most indices are one affine leaf: no stack.
  if (prog.kind == IndexProgram::Kind::Affine) {
    if (!evalAffine(binding, forms[prog.insts[0].operand], box, arith, outLo,
                    outHi))
      return IndexEval::Empty;
    return Checked && arith.overflow ? IndexEval::Overflow : IndexEval::Ok;
  }
  int64_t lo[MaxIndexDepth + 1], hi[MaxIndexDepth + 1];
  unsigned sp = 0;
  for (const IndexInst &inst : prog.insts) {
    int64_t k = 0;
    switch (inst.op) {
    case IndexInst::Op::Affine:
      if (!evalAffine(binding, forms[inst.operand], box, arith, lo[sp],
                      hi[sp]))
        return IndexEval::Empty;
      ++sp;
      break;
    case IndexInst::Op::Add:
      --sp;
      lo[sp - 1] = arith.add(lo[sp - 1], lo[sp]);
      hi[sp - 1] = arith.add(hi[sp - 1], hi[sp]);
      break;
    case IndexInst::Op::Sub: {
      --sp;
      int64_t l = arith.sub(lo[sp - 1], hi[sp]);
      hi[sp - 1] = arith.sub(hi[sp - 1], lo[sp]);
      lo[sp - 1] = l;
      break;
    }
    case IndexInst::Op::Neg:
      // Bounds stay within ±MaxIndexMagnitude, so negation cannot wrap.
      std::swap(lo[sp - 1], hi[sp - 1]);
      lo[sp - 1] = -lo[sp - 1];
      hi[sp - 1] = -hi[sp - 1];
      break;
    case IndexInst::Op::MulConst: {
      k = binding.getCoefficient(inst.operand);
      int64_t a = arith.mul(k, lo[sp - 1]), b = arith.mul(k, hi[sp - 1]);
      lo[sp - 1] = std::min(a, b);
      hi[sp - 1] = std::max(a, b);
      break;
    }
    case IndexInst::Op::Div:
    case IndexInst::Op::Rem:
      k = binding.getCoefficient(inst.operand);
      if (evalDivRem(inst.op == IndexInst::Op::Div, k, lo[sp - 1],
                     hi[sp - 1]) == IndexEval::Whole)
        return IndexEval::Whole;
      arith.check(hi[sp - 1], false);
      break;
    }
    if (Checked && arith.overflow)
      return IndexEval::Overflow;
  }
  outLo = lo[0];
  outHi = hi[0];
  return IndexEval::Ok;
}

/// True if some variable of `mask` has an empty range in `box`.
bool anyEmpty(uint64_t mask, ArrayRef<Range> box) {
  for (unsigned v = 0, e = box.size(); v != e; ++v)
    if ((mask >> v & 1) && box[v].empty())
      return true;
  return false;
}

/// The smallest integer not less than a / b, for b > 0.
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// Narrows [lo, hi], the clipped interval of a strided affine form, to the
/// first and last values the form really takes within it. The form takes
/// `c * y + t` for y over one variable's range and t over the sum of the
/// others' ranges; when every other coefficient is -1, 0 or 1 the t are
/// contiguous, and the values are runs of t's width every |c|, so the
/// extreme values within [lo, hi] are found exactly. With two or more
/// coefficients beyond ±1 the interval is left as it is (a bounding box
/// still, not the tightest). Returns false if no value lies in [lo, hi].
bool tightenStrided(const Binding &binding, const AffineForm &form,
                    ArrayRef<Range> box, int64_t &lo, int64_t &hi) {
  int64_t c = 0, yLo = 0, yHi = 0;
  int64_t tLo = binding.getCoefficient(form.constSlot), tHi = tLo;
  for (const AffineForm::Term &term : form.terms) {
    int64_t k = binding.getCoefficient(term.coefSlot);
    const Range &r = box[term.var];
    if (k > 1 || k < -1) {
      if (c != 0)
        return true;
      // Over y' = -y a negative coefficient becomes positive.
      c = k < 0 ? -k : k;
      yLo = k < 0 ? 1 - r.hi : r.lo;
      yHi = k < 0 ? -r.lo : r.hi - 1;
      continue;
    }
    int64_t a = k * r.lo, b = k * (r.hi - 1);
    tLo += std::min(a, b);
    tHi += std::max(a, b);
  }
  if (c == 0 || tHi - tLo + 1 >= c)
    return true; // The values are contiguous.
  // The last y whose run starts at or below hi, and the first whose run
  // ends at or above lo.
  int64_t top = std::min(yHi, floorDiv(hi - tLo, c));
  int64_t bottom = std::max(yLo, ceilDiv(lo - tHi, c));
  if (top < yLo || bottom > yHi)
    return false;
  int64_t newHi = std::min(c * top + tHi, hi);
  int64_t newLo = std::max(c * bottom + tLo, lo);
  if (newLo > newHi)
    return false;
  lo = newLo;
  hi = newHi;
  return true;
}

/// Narrows the upper bound `hi` of the clipped interval of `(affine) % k`
/// whose values wrapped around k once: they are [a mod k, k) and
/// [0, b mod k] for the affine interval [a, b], and [0, k - 1] is their
/// hull, but within a dimension shorter than k the first part may be
/// clipped away entirely. Exact when the affine values are contiguous (unit
/// coefficients), a bounding box otherwise.
void tightenWrappedRem(const Binding &binding, const IndexProgram &prog,
                       ArrayRef<Range> box, int64_t dimExtent, int64_t &hi) {
  if (prog.insts.size() != 2 || prog.insts[0].op != IndexInst::Op::Affine ||
      prog.insts[1].op != IndexInst::Op::Rem)
    return;
  int64_t k = binding.getCoefficient(prog.insts[1].operand);
  Arith<false> arith;
  int64_t a, b;
  if (k <= 0 ||
      !evalAffine(binding,
                  binding.getAnalysis().getAffineForms()[prog.insts[0].operand],
                  box, arith, a, b) ||
      floorDiv(a, k) + 1 != floorDiv(b, k))
    return;
  hi = floorMod(a, k) <= dimExtent - 1 ? std::min(k - 1, dimExtent - 1)
                                       : std::min(floorMod(b, k), dimExtent - 1);
}

/// The range of dimension `dimExtent` that index `prog` reads over `box`:
/// its interval clipped to the dimension (reads outside are zero padding),
/// narrowed to the values a strided read, or a `%` that wraps, really takes
/// there. Returns false
/// if it reads nothing.
bool clipIndex(const Binding &binding, const IndexProgram &prog,
               ArrayRef<Range> box, int64_t dimExtent, Range &out) {
  int64_t lo, hi;
  switch (runProgram<false>(binding, prog, box, lo, hi)) {
  case IndexEval::Empty:
  case IndexEval::Overflow:
    return false;
  case IndexEval::Whole:
    out = Range{0, dimExtent};
    return dimExtent > 0;
  case IndexEval::Ok:
    break;
  }
  int64_t clippedLo = std::max<int64_t>(lo, 0);
  int64_t clippedHi = std::min(hi, dimExtent - 1);
  if (clippedLo > clippedHi)
    return false;
  if (clippedLo != lo || clippedHi != hi) {
    if (prog.kind != IndexProgram::Kind::Affine)
      tightenWrappedRem(binding, prog, box, dimExtent, clippedHi);
    else if (!tightenStrided(
                 binding,
                 binding.getAnalysis().getAffineForms()[prog.insts[0].operand],
                 box, clippedLo, clippedHi))
      return false;
  }
  out = Range{clippedLo, clippedHi + 1};
  return true;
}

} // namespace

bool analysis::evaluateIndexInterval(const Binding &binding,
                                     const IndexProgram &prog,
                                     ArrayRef<Range> box, int64_t dimExtent,
                                     int64_t &lo, int64_t &hi) {
  IndexEval result = runProgram<false>(binding, prog, box, lo, hi);
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
  return runProgram<true>(binding, prog, box, lo, hi);
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
  int64_t extent = r.size();
  // Levels are mostly 2-way: a power of two divides by a shift (the same
  // quotient and remainder, extent being >= 0) instead of a division. Every
  // worker's region is derived where it is read; this took GPT-3's plan at
  // K = 256 from 8.80/8.71 s to 8.60/8.53 s of CPU (two alternating runs).
  int64_t q, rem;
  if ((n & (n - 1)) == 0) {
    unsigned shift = __builtin_ctz(n);
    q = extent >> shift;
    rem = extent & int64_t(n - 1);
  } else {
    q = extent / n;
    rem = extent % n;
  }
  int64_t lo = r.lo + c * q + std::min<int64_t>(c, rem);
  int64_t hi = r.lo + (c + 1) * q + std::min<int64_t>(c + 1, rem);
  return Range{lo, hi};
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
