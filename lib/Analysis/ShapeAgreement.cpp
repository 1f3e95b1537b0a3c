//===- ShapeAgreement.cpp - Does an output shape fit an operator? --------===//
//
// This file implements judgeOutputShape, the shape rule for an output shape
// given from outside an operator. Its per-dimension fit check mirrors the bound
// that analysis::inferOutputShape maximizes: with the other output
// variables at their first value and the reduction variables over their
// extents, an index that depends on output variable v (and on no other
// output variable) must stay within [-p, extent - 1 + p], where p is how far
// below 0 the index already reads at v = 0 (a padded convolution's `pad`).
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/ShapeAgreement.h"
#include "tofu/Analysis/Binding.h"
#include "tofu/Analysis/Regions.h"
#include "tofu/Analysis/ShapeInference.h"
#include "tofu/TDL/Printers.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::analysis;

namespace {

bool boundsVar(const IndexProgram &prog, unsigned var, unsigned rank);

/// The first read that output variable `var` with the binding's extent
/// overruns, as a message; empty if none does.
std::string checkVar(const Binding &binding, unsigned var) {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  unsigned rank = analysis.getOutputRank();
  SmallVector<Range, 8> box;
  getFullBox(binding, box);
  for (unsigned v = 0; v != rank; ++v)
    box[v] = Range{0, 1};
  int64_t extent = binding.getOutputShape()[var];
  if (extent <= 0)
    return "";
  for (const ReadAnalysis &read : analysis.getReads())
    for (unsigned d = 0, n = read.dims.size(); d != n; ++d) {
      const IndexProgram &prog = read.dims[d];
      if (!boundsVar(prog, var, rank))
        continue;
      int64_t dimExtent = binding.getInputShape(read.tensor)[d];
      int64_t lo, hi;
      box[var] = Range{0, 1};
      if (!evaluateIndexInterval(binding, prog, box, dimExtent, lo, hi))
        continue;
      int64_t padding = std::max<int64_t>(0, -lo);
      box[var] = Range{0, extent};
      evaluateIndexInterval(binding, prog, box, dimExtent, lo, hi);
      if (lo >= -padding && hi <= dimExtent - 1 + padding)
        continue;
      return "output dimension " + std::to_string(var) + " ('" +
             analysis.getOp().getIndexVars()[var]->getName().str() +
             "') of extent " + std::to_string(extent) + " reads index " +
             std::to_string(d) + " of '" +
             read.expr->getTensorName().str() + "' (" +
             tdl::exprToString(read.expr->getIndex(d)) + ") at [" +
             std::to_string(lo) + ", " + std::to_string(hi) +
             "], outside its extent " + std::to_string(dimExtent);
    }
  return "";
}

/// True if index program `prog` is one that output variable `var` alone
/// bounds (the reads shape inference uses for `var`).
bool boundsVar(const IndexProgram &prog, unsigned var, unsigned rank) {
  uint64_t outputMask = rank >= 64 ? ~uint64_t(0) : (uint64_t(1) << rank) - 1;
  uint64_t others = outputMask & ~(uint64_t(1) << var);
  return prog.kind != IndexProgram::Kind::Whole && (prog.varMask >> var & 1) &&
         !(prog.varMask & others);
}

/// How far a given output extent may differ from the inferred one.
struct ExtentTolerance {
  /// The given extent may be this much smaller (exclusive)...
  int64_t below = 1;
  /// ...or this much larger (exclusive).
  int64_t above = 1;
};

/// The tolerance of output variable `var`, from the reads that `var` alone
/// bounds. Inference gives the largest extent whose reads stay in bounds
/// (with symmetric padding). With a stride s in such a read (the largest
/// absolute coefficient of another index variable, or a divisor), the s - 1
/// extents below it read the same elements except the last partial stride
/// (PyTorch's floor in a strided convolution's weight gradient,
/// output_padding in its input gradient): `below` is s. Through a divisor
/// d the padding inference measures (in the divided units) is rounded up
/// to a multiple of d, up to d - 1 more rows: `below` is 2d - 1 (an input
/// gradient of a stride-2, kernel-3, padding-1 convolution of an odd
/// extent reads 2 rows past it). Reads through `/` or `%` are analysed
/// conservatively, so with a divisor d the d - 1 extents above are
/// accepted too (a strided pooling backward whose reads hull the window):
/// `above` is d. Affine reads without division are exact above: `above`
/// is 1.
ExtentTolerance getExtentTolerance(const Binding &binding, unsigned var) {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  ExtentTolerance tolerance;
  auto magnitude = [](int64_t coef) {
    return coef >= 0 ? coef : coef == INT64_MIN ? INT64_MAX : -coef;
  };
  for (const ReadAnalysis &read : analysis.getReads())
    for (const IndexProgram &prog : read.dims) {
      if (!boundsVar(prog, var, analysis.getOutputRank()))
        continue;
      for (const IndexInst &inst : prog.insts) {
        if (inst.op == IndexInst::Op::Div || inst.op == IndexInst::Op::Rem) {
          int64_t d = magnitude(binding.getCoefficient(inst.operand));
          tolerance.below = std::max(tolerance.below, 2 * d - 1);
          tolerance.above = std::max(tolerance.above, d);
        } else if (inst.op == IndexInst::Op::MulConst) {
          tolerance.below = std::max(
              tolerance.below, magnitude(binding.getCoefficient(inst.operand)));
        } else if (inst.op == IndexInst::Op::Affine) {
          for (const AffineForm::Term &term :
               analysis.getAffineForms()[inst.operand].terms)
            if (term.var != var)
              tolerance.below = std::max(
                  tolerance.below,
                  magnitude(binding.getCoefficient(term.coefSlot)));
        }
      }
    }
  return tolerance;
}

/// Checks each output dimension of `binding` (which has the given output
/// shape) against the reads that bound it alone: an empty string if every
/// dimension fits, else a message naming the first dimension and the read
/// it overruns.
std::string checkOutputExtents(const Binding &binding) {
  for (unsigned v = 0, e = binding.getAnalysis().getOutputRank(); v != e; ++v) {
    std::string problem = checkVar(binding, v);
    if (!problem.empty())
      return problem;
  }
  return "";
}

/// Where inference determines the whole output: true if `declared` equals
/// `inferred`, or differs from it in each dimension by less than that
/// dimension's ExtentTolerance; for an opaque body any extent up to the
/// inferred one agrees too.
bool declaredShapeAgrees(const OperatorAnalysis &analysis,
                         ArrayRef<Shape> inputShapes, ArrayRef<int64_t> params,
                         ArrayRef<int64_t> inferred, ArrayRef<int64_t> declared,
                         bool opaque) {
  if (inferred == declared)
    return true;
  // A declared extent within the tolerance the strides of the reads that
  // bound it give is accepted (getExtentTolerance).
  llvm::Expected<Binding> binding =
      Binding::create(analysis, inputShapes, params);
  if (!binding) {
    llvm::consumeError(binding.takeError());
    return false;
  }
  for (unsigned v = 0, e = inferred.size(); v != e; ++v) {
    // An opaque body's reads bound what it may read, not what it computes:
    // any extent whose reads stay in bounds agrees.
    if (declared[v] == inferred[v] || (opaque && declared[v] < inferred[v]))
      continue;
    ExtentTolerance tolerance = getExtentTolerance(*binding, v);
    if (declared[v] < inferred[v] ? inferred[v] - declared[v] >= tolerance.below
                                  : declared[v] - inferred[v] >= tolerance.above)
      return false;
  }
  return true;
}

} // namespace

ShapeVerdict analysis::judgeOutputShape(const OperatorAnalysis &analysis,
                                        ArrayRef<Shape> inputShapes,
                                        ArrayRef<int64_t> params,
                                        ArrayRef<int64_t> declared,
                                        bool opaque) {
  using Kind = ShapeVerdict::Kind;
  llvm::Expected<Shape> inferred =
      inferOutputShape(analysis, inputShapes, params);
  if (inferred) {
    if (ArrayRef<int64_t>(*inferred) == declared)
      return {Kind::Exact, ""};
    if (declaredShapeAgrees(analysis, inputShapes, params, *inferred,
                            declared, opaque))
      return {Kind::Tolerated, formatShape(*inferred)};
    return {Kind::Mismatch, "the operator gives " + formatShape(*inferred)};
  }
  // Not every output dimension is determined (or the inputs do not fit):
  // the declared shape must at least bind with the inputs.
  bool undetermined = false;
  std::string why;
  llvm::handleAllErrors(
      inferred.takeError(),
      [&](const UndeterminedShapeError &e) {
        undetermined = true;
        why = e.message();
      },
      [&](const llvm::ErrorInfoBase &e) { why = e.message(); });
  llvm::Expected<Binding> binding =
      Binding::create(analysis, inputShapes, declared, params);
  if (!binding)
    return {Kind::Invalid, llvm::toString(binding.takeError())};
  if (!undetermined)
    return {Kind::Invalid, why};
  std::string problem = checkOutputExtents(*binding);
  if (!problem.empty())
    return {Kind::Mismatch, problem};
  return {Kind::Undetermined, why};
}
