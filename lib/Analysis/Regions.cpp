//===- Regions.cpp - Concrete regions of partitioned operators ------------===//
//
// This file implements concrete interval evaluation of index programs and
// the per-worker regions built from it. It is the planner's hot path: it
// uses only the Binding's precomputed integers and fixed-size stacks.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Regions.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::analysis;

namespace {

/// Pushes the closed interval of an affine form over `box`. Returns false
/// if a variable it uses has an empty range.
bool evalAffine(const Binding &binding, const AffineForm &form,
                ArrayRef<Range> box, int64_t &lo, int64_t &hi) {
  lo = hi = binding.getCoefficient(form.constSlot);
  for (const AffineForm::Term &term : form.terms) {
    const Range &r = box[term.var];
    if (r.empty())
      return false;
    int64_t c = binding.getCoefficient(term.coefSlot);
    int64_t a = c * r.lo, b = c * (r.hi - 1);
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return true;
}

enum class EvalResult { Ok, Empty, Whole };

/// Divides or reduces [lo, hi] by `k`; Whole if k is not positive.
EvalResult evalDivRem(bool isDiv, int64_t k, int64_t &lo, int64_t &hi) {
  if (k <= 0)
    return EvalResult::Whole;
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
  return EvalResult::Ok;
}

EvalResult runProgram(const Binding &binding, const IndexProgram &prog,
                      ArrayRef<Range> box, int64_t &outLo, int64_t &outHi) {
  int64_t lo[MaxIndexDepth + 1], hi[MaxIndexDepth + 1];
  unsigned sp = 0;
  ArrayRef<AffineForm> forms = binding.getAnalysis().getAffineForms();
  for (const IndexInst &inst : prog.insts) {
    int64_t k = 0;
    switch (inst.op) {
    case IndexInst::Op::Affine:
      if (!evalAffine(binding, forms[inst.operand], box, lo[sp], hi[sp]))
        return EvalResult::Empty;
      ++sp;
      break;
    case IndexInst::Op::Add:
      --sp;
      lo[sp - 1] += lo[sp];
      hi[sp - 1] += hi[sp];
      break;
    case IndexInst::Op::Sub:
      --sp;
      lo[sp - 1] -= hi[sp];
      hi[sp - 1] -= lo[sp];
      break;
    case IndexInst::Op::Neg:
      std::swap(lo[sp - 1], hi[sp - 1]);
      lo[sp - 1] = -lo[sp - 1];
      hi[sp - 1] = -hi[sp - 1];
      break;
    case IndexInst::Op::MulConst: {
      k = binding.getCoefficient(inst.operand);
      int64_t a = k * lo[sp - 1], b = k * hi[sp - 1];
      lo[sp - 1] = std::min(a, b);
      hi[sp - 1] = std::max(a, b);
      break;
    }
    case IndexInst::Op::Div:
    case IndexInst::Op::Rem:
      k = binding.getCoefficient(inst.operand);
      if (evalDivRem(inst.op == IndexInst::Op::Div, k, lo[sp - 1],
                     hi[sp - 1]) == EvalResult::Whole)
        return EvalResult::Whole;
      break;
    }
  }
  outLo = lo[0];
  outHi = hi[0];
  return EvalResult::Ok;
}

/// True if some variable of `mask` has an empty range in `box`.
bool anyEmpty(uint64_t mask, ArrayRef<Range> box) {
  for (unsigned v = 0, e = box.size(); v != e; ++v)
    if ((mask >> v & 1) && box[v].empty())
      return true;
  return false;
}

} // namespace

bool analysis::evaluateIndexInterval(const Binding &binding,
                                     const IndexProgram &prog,
                                     ArrayRef<Range> box, int64_t dimExtent,
                                     int64_t &lo, int64_t &hi) {
  EvalResult result = prog.kind == IndexProgram::Kind::Whole
                          ? EvalResult::Whole
                          : runProgram(binding, prog, box, lo, hi);
  if (result == EvalResult::Whole) {
    lo = 0;
    hi = dimExtent - 1;
  }
  return result != EvalResult::Empty;
}

void analysis::getFullBox(const Binding &binding, llvm::SmallVectorImpl<Range> &box) {
  ArrayRef<int64_t> extents = binding.getVarExtents();
  box.resize(extents.size());
  for (unsigned v = 0, e = extents.size(); v != e; ++v)
    box[v] = Range{0, extents[v]};
}

/// Clips every dimension of `read` to its tensor and grows `region` to
/// hold it. Returns false (leaving `region` alone) if the read is empty.
static bool addRead(const Binding &binding, const ReadAnalysis &read,
                    ArrayRef<Range> box, bool hadAny, Region &region) {
  ArrayRef<int64_t> shape = binding.getInputShape(read.tensor);
  Range clipped[16];
  unsigned rank = read.dims.size();
  Region local;
  Range *dims = rank <= 16 ? clipped : (local.resize(rank), local.data());
  for (unsigned d = 0; d != rank; ++d) {
    int64_t lo, hi;
    if (!evaluateIndexInterval(binding, read.dims[d], box, shape[d], lo, hi))
      return false;
    dims[d] = Range{std::max<int64_t>(lo, 0), std::min(hi + 1, shape[d])};
    if (dims[d].empty())
      return false;
  }
  for (unsigned d = 0; d != rank; ++d) {
    if (!hadAny) {
      region[d] = dims[d];
      continue;
    }
    region[d].lo = std::min(region[d].lo, dims[d].lo);
    region[d].hi = std::max(region[d].hi, dims[d].hi);
  }
  return true;
}

void analysis::computeWorkerRegions(const Binding &binding, ArrayRef<Range> box,
                                    WorkerRegions &out) {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  unsigned outRank = analysis.getOutputRank();
  out.output.assign(box.begin(), box.begin() + outRank);
  unsigned numTensors = analysis.getNumTensors();
  out.inputs.resize(numTensors);
  SmallVector<bool, 16> hasAny(numTensors, false);
  for (unsigned t = 0; t != numTensors; ++t)
    out.inputs[t].assign(binding.getInputShape(t).size(), Range{0, 0});
  for (const ReadAnalysis &read : analysis.getReads()) {
    if (anyEmpty(read.scopeMask, box))
      continue;
    if (addRead(binding, read, box, hasAny[read.tensor],
                out.inputs[read.tensor]))
      hasAny[read.tensor] = true;
  }
}

void analysis::instantiateStrategy(const Binding &binding,
                                   const Strategy &strategy,
                                   ArrayRef<Range> parts,
                                   llvm::SmallVectorImpl<WorkerRegions> &out) {
  SmallVector<Range, 8> box;
  getFullBox(binding, box);
  out.resize(parts.size());
  for (unsigned w = 0, e = parts.size(); w != e; ++w) {
    box[strategy.var] = parts[w];
    computeWorkerRegions(binding, box, out[w]);
    out[w].partial = strategy.kind == Strategy::Kind::Reduce;
  }
}

void analysis::splitEvenly(int64_t extent, unsigned n,
                           llvm::SmallVectorImpl<Range> &parts) {
  parts.resize(n);
  int64_t base = n ? extent / n : 0, extra = n ? extent % n : 0;
  int64_t lo = 0;
  for (unsigned w = 0; w != n; ++w) {
    int64_t size = base + (int64_t(w) < extra ? 1 : 0);
    parts[w] = Range{lo, lo + size};
    lo += size;
  }
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
