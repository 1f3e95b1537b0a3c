//===- SymbolicRegions.cpp - Regions as functions of the extents ----------===//
//
// This file implements symbolic interval evaluation of index programs
// (Poly bounds, the paper's I +- k, I * k, I / k, I +- I') and the symbolic
// regions of a strategy's workers.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/SymbolicRegions.h"

#include "tofu/TDL/Printers.h"

#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

std::string analysis::getAtomName(const OperatorAnalysis &analysis, Atom atom) {
  const OpDecl &op = analysis.getOp();
  switch (atom.getKind()) {
  case Atom::Kind::Param:
    return op.getParams()[atom.getA()]->getName().str();
  case Atom::Kind::VarExtent:
    return ("|" + op.getIndexVars()[atom.getA()]->getName() + "|").str();
  case Atom::Kind::TensorDim:
    return ("|" + op.getTensors()[atom.getA()]->getName() + "." +
            Twine(atom.getB()) + "|")
        .str();
  case Atom::Kind::Opaque:
    return "(" + exprToString(*analysis.getOpaqueExprs()[atom.getA()]) + ")";
  }
  return "?";
}

void analysis::printPoly(llvm::raw_ostream &os, const OperatorAnalysis &analysis,
                         const Poly &p) {
  p.print(os, [&](Atom a) { return getAtomName(analysis, a); });
}

namespace {

/// A closed symbolic interval [lo, hi] on the evaluation stack.
struct SymInterval {
  Poly lo, hi;
};

/// Evaluates index programs over symbolic variable ranges.
class SymbolicEvaluator {
public:
  SymbolicEvaluator(const OperatorAnalysis &analysis, ArrayRef<SymRange> box)
      : analysis(analysis), box(box) {}

  /// The half-open range of `prog`, or None for the whole dimension.
  llvm::Optional<SymRange> evaluate(const IndexProgram &prog);

private:
  bool scale(const Poly &c, SymInterval &v);
  bool affine(const AffineForm &form, SymInterval &out);
  bool step(const IndexInst &inst, llvm::SmallVectorImpl<SymInterval> &stack);

  const OperatorAnalysis &analysis;
  ArrayRef<SymRange> box;
  bool exact = true;
};

} // namespace

/// Multiplies `v` by `c`; false if the sign of `c` is unknown.
bool SymbolicEvaluator::scale(const Poly &c, SymInterval &v) {
  switch (c.getSign()) {
  case Sign::Zero:
    v = {Poly(), Poly()};
    return true;
  case Sign::NonNegative:
    v = {c * v.lo, c * v.hi};
    return true;
  case Sign::NonPositive:
    v = {c * v.hi, c * v.lo};
    return true;
  case Sign::Unknown:
    return false;
  }
  return false;
}

bool SymbolicEvaluator::affine(const AffineForm &form, SymInterval &out) {
  ArrayRef<Poly> coefs = analysis.getCoefficients();
  out.lo = out.hi = coefs[form.constSlot];
  for (const AffineForm::Term &term : form.terms) {
    const SymRange &r = box[term.var];
    SymInterval v{r.lo, r.hi - Poly(Rational(1))};
    if (!scale(coefs[term.coefSlot], v))
      return false;
    out.lo = out.lo + v.lo;
    out.hi = out.hi + v.hi;
  }
  return true;
}

bool SymbolicEvaluator::step(const IndexInst &inst,
                             llvm::SmallVectorImpl<SymInterval> &stack) {
  ArrayRef<Poly> coefs = analysis.getCoefficients();
  switch (inst.op) {
  case IndexInst::Op::Affine:
    stack.emplace_back();
    return affine(analysis.getAffineForms()[inst.operand], stack.back());
  case IndexInst::Op::Add:
  case IndexInst::Op::Sub: {
    SymInterval rhs = stack.pop_back_val();
    SymInterval &lhs = stack.back();
    if (inst.op == IndexInst::Op::Add)
      lhs = {lhs.lo + rhs.lo, lhs.hi + rhs.hi};
    else
      lhs = {lhs.lo - rhs.hi, lhs.hi - rhs.lo};
    return true;
  }
  case IndexInst::Op::Neg:
    stack.back() = {-stack.back().hi, -stack.back().lo};
    return true;
  case IndexInst::Op::MulConst:
    return scale(coefs[inst.operand], stack.back());
  case IndexInst::Op::Div:
  case IndexInst::Op::Rem: {
    const Poly &k = coefs[inst.operand];
    exact = false;
    if (inst.op == IndexInst::Op::Rem) {
      stack.back() = {Poly(), k - Poly(Rational(1))};
      return k.getSign() == Sign::NonNegative;
    }
    if (!k.isConstant() || !(Rational(0) < k.getConstant()))
      return false;
    stack.back() = {stack.back().lo / k.getConstant(),
                    stack.back().hi / k.getConstant()};
    return true;
  }
  }
  return false;
}

llvm::Optional<SymRange> SymbolicEvaluator::evaluate(const IndexProgram &prog) {
  if (prog.kind == IndexProgram::Kind::Whole)
    return llvm::None;
  exact = true;
  SmallVector<SymInterval, 4> stack;
  for (const IndexInst &inst : prog.insts)
    if (!step(inst, stack))
      return llvm::None;
  SymRange result{stack[0].lo, stack[0].hi + Poly(Rational(1)), exact};
  return result;
}

namespace {

/// The full symbolic range of every index variable.
void getSymbolicBox(const OperatorAnalysis &analysis,
                    llvm::SmallVectorImpl<SymRange> &box) {
  const OpDecl &op = analysis.getOp();
  for (const IndexVarDecl *var : op.getIndexVars()) {
    Poly extent = Poly::atom(Atom::get(Atom::Kind::VarExtent, var->getId()));
    if (llvm::Optional<unsigned> slot = analysis.getExtentSlot(var->getId()))
      extent = analysis.getCoefficients()[*slot];
    box.push_back({Poly(), extent});
  }
}

/// Adds `region` to the regions of a tensor, merging it with an equal one.
void addRegion(llvm::SmallVectorImpl<SymRegion> &regions, SymRegion region) {
  for (const SymRegion &r : regions)
    if (r == region)
      return;
  regions.push_back(std::move(region));
}

SymbolicWorker computeWorker(const OperatorAnalysis &analysis,
                             ArrayRef<SymRange> box) {
  SymbolicWorker worker;
  worker.output.assign(box.begin(), box.begin() + analysis.getOutputRank());
  worker.inputs.resize(analysis.getNumTensors());
  SymbolicEvaluator eval(analysis, box);
  for (const ReadAnalysis &read : analysis.getReads()) {
    SymRegion region;
    for (unsigned d = 0, n = read.dims.size(); d != n; ++d) {
      llvm::Optional<SymRange> r = eval.evaluate(read.dims[d]);
      if (!r)
        r = SymRange{Poly(), Poly::atom(Atom::get(Atom::Kind::TensorDim,
                                                  read.tensor, d))};
      region.push_back(std::move(*r));
    }
    addRegion(worker.inputs[read.tensor], std::move(region));
  }
  return worker;
}

} // namespace

void analysis::computeSymbolicStrategy(const OperatorAnalysis &analysis,
                                       const Strategy &strategy,
                                       unsigned numWorkers,
                                       llvm::SmallVectorImpl<SymbolicWorker> &out) {
  SmallVector<SymRange, 8> box;
  getSymbolicBox(analysis, box);
  Poly extent = box[strategy.var].hi;
  for (unsigned w = 0; w != numWorkers; ++w) {
    box[strategy.var] = {extent * Poly(Rational(w, numWorkers)),
                         extent * Poly(Rational(w + 1, numWorkers))};
    out.push_back(computeWorker(analysis, box));
    out.back().partial = strategy.kind == Strategy::Kind::Reduce;
  }
}
