//===- ShapeInference.cpp - Output shapes from input shapes ---------------===//
//
// This file implements inferOutputShape by binary search over each output
// extent, using the concrete interval evaluation of Regions.cpp: the bounds
// of an index grow monotonically with the range of its variables, so the
// feasible extents form a prefix.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/ShapeInference.h"

#include "tofu/Analysis/Regions.h"
#include "tofu/TDL/Printers.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

char UndeterminedShapeError::ID;

namespace {

/// Extents beyond this are taken as "not bounded by this read".
constexpr int64_t MaxExtent = int64_t(1) << 40;

llvm::Error shapeError(const OperatorAnalysis &analysis, const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "operator '" + analysis.getOp().getName() +
                                     "': " + msg);
}

/// Infers output dimension `var` of the operator.
class DimInference {
public:
  DimInference(const Binding &binding, unsigned var)
      : binding(binding), var(var) {
    getFullBox(binding, box);
    for (unsigned v = 0, e = binding.getAnalysis().getOutputRank(); v != e; ++v)
      box[v] = Range{0, 1};
  }

  llvm::Expected<int64_t> infer();

private:
  /// The largest extent that keeps one index in bounds, None if it does not
  /// bound the variable, or an error if even extent 1 reads out of bounds.
  llvm::Expected<llvm::Optional<int64_t>> inferFrom(const ReadAnalysis &read,
                                                    unsigned dim);
  /// The interval of `prog` with the variable over [0, extent). Checked
  /// unless `unchecked` (the search tries extents far beyond the binding's;
  /// once the largest has been evaluated without overflow, smaller ones
  /// cannot overflow).
  IndexEval evaluate(const IndexProgram &prog, int64_t extent,
                     int64_t dimExtent, int64_t &lo, int64_t &hi,
                     bool unchecked = false) {
    box[var] = Range{0, extent};
    IndexEval result = IndexEval::Ok;
    if (!unchecked)
      result = evaluateIndexIntervalChecked(binding, prog, box, lo, hi);
    else if (!evaluateIndexInterval(binding, prog, box, dimExtent, lo, hi))
      result = IndexEval::Empty;
    if (result == IndexEval::Whole) {
      lo = 0;
      hi = dimExtent - 1;
    }
    return result;
  }

  const Binding &binding;
  unsigned var;
  SmallVector<Range, 8> box;
};

} // namespace

llvm::Expected<llvm::Optional<int64_t>>
DimInference::inferFrom(const ReadAnalysis &read, unsigned dim) {
  const IndexProgram &prog = read.dims[dim];
  int64_t dimExtent = binding.getInputShape(read.tensor)[dim];
  int64_t lo = 0, hi;
  IndexEval first = evaluate(prog, 1, dimExtent, lo, hi);
  if (first == IndexEval::Empty)
    return llvm::Optional<int64_t>();
  if (first == IndexEval::Overflow)
    return shapeError(binding.getAnalysis(),
                      "index " + Twine(dim) + " of '" +
                          read.expr->getTensorName() + "' (" +
                          exprToString(read.expr->getIndex(dim)) +
                          ") overflows 64-bit arithmetic with these shapes "
                          "and params (a bound beyond 2^62)");
  int64_t padding = std::max<int64_t>(0, -lo);
  // An extent whose bounds overflow reads far out of bounds: it does not fit.
  bool unchecked = false;
  auto fits = [&](int64_t extent) {
    int64_t l, h;
    return evaluate(prog, extent, dimExtent, l, h, unchecked) !=
               IndexEval::Overflow &&
           l >= -padding && h <= dimExtent - 1 + padding;
  };
  if (!fits(1)) {
    const OpDecl &op = binding.getAnalysis().getOp();
    return shapeError(
        binding.getAnalysis(),
        "no extent of output dimension " + Twine(var) + " ('" +
            op.getIndexVars()[var]->getName() + "') keeps index " + Twine(dim) +
            " of '" + read.expr->getTensorName() + "' (" +
            exprToString(read.expr->getIndex(dim)) + ") within its extent " +
            Twine(dimExtent));
  }
  int64_t l, h;
  if (fits(MaxExtent))
    return llvm::Optional<int64_t>();
  unchecked = evaluate(prog, MaxExtent, dimExtent, l, h) != IndexEval::Overflow;
  int64_t good = 1, bad = MaxExtent;
  while (bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  return llvm::Optional<int64_t>(good);
}

llvm::Expected<int64_t> DimInference::infer() {
  const OperatorAnalysis &analysis = binding.getAnalysis();
  uint64_t outputMask = (analysis.getOutputRank() >= 64)
                            ? ~uint64_t(0)
                            : (uint64_t(1) << analysis.getOutputRank()) - 1;
  uint64_t otherOutputs = outputMask & ~(uint64_t(1) << var);
  llvm::Optional<int64_t> best;
  for (const ReadAnalysis &read : analysis.getReads())
    for (unsigned d = 0, n = read.dims.size(); d != n; ++d) {
      const IndexProgram &prog = read.dims[d];
      if (prog.kind == IndexProgram::Kind::Whole ||
          !(prog.varMask >> var & 1) || (prog.varMask & otherOutputs))
        continue;
      auto extent = inferFrom(read, d);
      if (!extent)
        return extent.takeError();
      if (*extent && (!best || **extent < *best))
        best = **extent;
    }
  if (best)
    return *best;
  return llvm::make_error<UndeterminedShapeError>(
      ("operator '" + analysis.getOp().getName() +
       "': the reads do not determine output dimension " + Twine(var) + " ('" +
       analysis.getOp().getIndexVars()[var]->getName() +
       "'): no tensor index bounds it; give the output shape explicitly")
          .str());
}

llvm::Expected<Shape> analysis::inferOutputShape(const OperatorAnalysis &analysis,
                                                 ArrayRef<Shape> inputShapes,
                                                 ArrayRef<int64_t> params) {
  llvm::Expected<Binding> binding =
      Binding::create(analysis, inputShapes, params);
  if (!binding)
    return binding.takeError();
  Shape shape;
  for (unsigned v = 0, e = analysis.getOutputRank(); v != e; ++v) {
    // An explicit extent (`lambda z < 1, j: ...`) determines the dimension.
    if (analysis.getExtentSlot(v)) {
      shape.push_back(binding->getVarExtent(v));
      continue;
    }
    llvm::Expected<int64_t> extent = DimInference(*binding, v).infer();
    if (!extent)
      return extent.takeError();
    shape.push_back(*extent);
  }
  return shape;
}

llvm::Expected<Shape> analysis::inferOutputShape(const tdl::OpDecl &op,
                                                 ArrayRef<Shape> inputShapes,
                                                 ArrayRef<int64_t> params) {
  llvm::Expected<OperatorAnalysis> analysis = OperatorAnalysis::analyze(op);
  if (!analysis)
    return analysis.takeError();
  return inferOutputShape(*analysis, inputShapes, params);
}
