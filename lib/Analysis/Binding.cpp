//===- Binding.cpp - An operator analysis bound to shapes and params ------===//
//
// This file implements Binding: shape and param checks, the extents of the
// index variables, the evaluation of the coefficient table (checked for
// overflow), and the proof that interval arithmetic over the full extents
// stays within ±2^62, which lets Regions.cpp compute unchecked.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Binding.h"

#include "tofu/Analysis/Regions.h"
#include "tofu/TDL/Printers.h"

#include "llvm/Support/MathExtras.h"

#include <cstdlib>

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

/// Limits that keep every region computation within int64_t.
constexpr int64_t MaxExtent = int64_t(1) << 40;
constexpr int64_t MaxParam = MaxExtent;

static llvm::Error bindError(const OperatorAnalysis &analysis, const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "operator '" + analysis.getOp().getName() +
                                     "': " + msg);
}

int64_t Binding::getAtomValue(Atom atom) const {
  switch (atom.getKind()) {
  case Atom::Kind::Param:
    return params[atom.getA()];
  case Atom::Kind::VarExtent:
    return varExtents[atom.getA()];
  case Atom::Kind::TensorDim:
    return inputShapes[atom.getA()][atom.getB()];
  case Atom::Kind::Opaque:
    return opaqueValues[atom.getA()];
  }
  return 0;
}

llvm::Error Binding::bindInputs(ArrayRef<Shape> shapes,
                                ArrayRef<int64_t> values) {
  const OpDecl &op = analysis->getOp();
  if (shapes.size() != analysis->getNumTensors())
    return bindError(*analysis, "expects " + Twine(analysis->getNumTensors()) +
                                    " input tensors, got " + Twine(shapes.size()));
  if (values.size() != analysis->getNumParams())
    return bindError(*analysis, "expects " + Twine(analysis->getNumParams()) +
                                    " params, got " + Twine(values.size()));
  for (unsigned t = 0, e = shapes.size(); t != e; ++t) {
    int rank = analysis->getTensorRank(t);
    StringRef name = op.getTensors()[t]->getName();
    if (rank >= 0 && int(shapes[t].size()) != rank)
      return bindError(*analysis, "tensor '" + name + "' has rank " +
                                      Twine(rank) + " but its shape " +
                                      formatShape(shapes[t]) + " has rank " +
                                      Twine(shapes[t].size()));
    if (llvm::any_of(shapes[t], [](int64_t d) { return d < 0 || d > MaxExtent; }))
      return bindError(*analysis, "tensor '" + name +
                                      "' has an extent that is negative or "
                                      "larger than 2^40");
  }
  for (unsigned p = 0, e = values.size(); p != e; ++p)
    if (values[p] < -MaxParam || values[p] > MaxParam)
      return bindError(*analysis, "param '" + op.getParams()[p]->getName() +
                                      "' is outside [-2^40, 2^40]");
  inputShapes.assign(shapes.begin(), shapes.end());
  params.assign(values.begin(), values.end());
  for (const Expr *e : analysis->getOpaqueExprs()) {
    llvm::Optional<int64_t> v = evaluateConstant(*e, params);
    if (!v)
      return bindError(*analysis, "cannot evaluate a constant expression of "
                                  "params with these param values (division "
                                  "by zero or overflow?)");
    opaqueValues.push_back(*v);
  }
  for (const Poly &p : analysis->getCoefficients()) {
    Rational value = p.evaluate([&](Atom a) { return getAtomValue(a); });
    if (!value.isValid())
      return bindError(*analysis, "a coefficient of an index overflows "
                                  "64-bit arithmetic with these params");
    coefValues.push_back(value.floor());
  }
  return llvm::Error::success();
}

llvm::Error Binding::bindVarExtents() {
  const OpDecl &op = analysis->getOp();
  varExtents.assign(analysis->getNumVars(), 0);
  // An output variable with an explicit extent has it before the output
  // shape is bound; setOutputShape checks that the shape agrees.
  for (const IndexVarDecl *var : op.getIndexVars()) {
    if (var->isOutput() && !analysis->getExtentSlot(var->getId()))
      continue;
    const Extent &extent = var->getExtent();
    int64_t value = 0;
    if (extent.kind == Extent::Kind::TensorDim)
      value = inputShapes[extent.tensor->getPosition()][extent.dim];
    else if (llvm::Optional<unsigned> slot = analysis->getExtentSlot(var->getId()))
      value = coefValues[*slot];
    else
      return bindError(*analysis, "the extent of '" + var->getName() +
                                      "' is unknown");
    if (value < 0 || value > MaxExtent)
      return bindError(*analysis, "the extent of '" + var->getName() +
                                      "' is " + Twine(value) +
                                      " with these params");
    varExtents[var->getId()] = value;
  }
  return checkLoneVarExtents();
}

llvm::Error Binding::checkIndexArithmetic() const {
  // The common case, small coefficients: every bound is at most the
  // analysis' index weight times the largest coefficient times the largest
  // extent (OperatorAnalysis::getIndexWeight).
  if (unsigned weight = analysis->getIndexWeight()) {
    int64_t maxCoef = 1, maxExtent = 1, product, bound;
    for (int64_t c : coefValues)
      maxCoef = std::max(maxCoef, c == INT64_MIN ? INT64_MAX : std::abs(c));
    for (int64_t e : varExtents)
      maxExtent = std::max(maxExtent, e);
    if (!llvm::MulOverflow(maxCoef, maxExtent, product) &&
        !llvm::MulOverflow(product, int64_t(weight), bound) &&
        bound <= MaxIndexMagnitude)
      return llvm::Error::success();
  }
  SmallVector<Range, MaxIndexVars> box;
  getFullBox(*this, box);
  for (const ReadAnalysis &read : analysis->getReads())
    for (unsigned d = 0, n = read.dims.size(); d != n; ++d) {
      int64_t lo, hi;
      if (evaluateIndexIntervalChecked(*this, read.dims[d], box, lo, hi) !=
          IndexEval::Overflow)
        continue;
      return bindError(*analysis,
                       "index " + Twine(d) + " of '" +
                           read.expr->getTensorName() + "' (" +
                           exprToString(read.expr->getIndex(d)) +
                           ") overflows 64-bit arithmetic with these shapes "
                           "and params (a bound beyond 2^62)");
    }
  return llvm::Error::success();
}

llvm::Error Binding::checkLoneVarExtents() const {
  const OpDecl &op = analysis->getOp();
  for (const ReadAnalysis &read : analysis->getReads())
    for (unsigned d = 0, n = read.dims.size(); d != n; ++d) {
      int var = read.dims[d].loneVar;
      if (var < 0 || unsigned(var) < op.getOutputRank())
        continue;
      const IndexVarDecl &decl = *op.getIndexVars()[var];
      if (decl.getExtent().kind != Extent::Kind::TensorDim)
        continue;
      int64_t seen = inputShapes[read.tensor][d];
      if (seen == varExtents[var])
        continue;
      const Extent &extent = decl.getExtent();
      return bindError(
          *analysis, "'" + decl.getName() + "' ranges over dimension " +
                         Twine(extent.dim) + " of '" +
                         extent.tensor->getName() + "' (" +
                         Twine(varExtents[var]) + ") but also indexes dimension " +
                         Twine(d) + " of '" + read.expr->getTensorName() +
                         "' (" + Twine(seen) + ")");
    }
  return llvm::Error::success();
}

llvm::Error Binding::setOutputShape(ArrayRef<int64_t> shape) {
  unsigned rank = analysis->getOutputRank();
  if (shape.size() != rank)
    return bindError(*analysis, "the output has rank " + Twine(rank) +
                                    " but the shape " + formatShape(shape) +
                                    " has rank " + Twine(shape.size()));
  if (llvm::any_of(shape, [](int64_t d) { return d < 0 || d > MaxExtent; }))
    return bindError(*analysis, "the output shape has an extent that is "
                                "negative or larger than 2^40");
  for (unsigned i = 0; i != rank; ++i)
    if (analysis->getExtentSlot(i) && varExtents[i] != shape[i])
      return bindError(*analysis,
                       "output dimension " + Twine(i) + " ('" +
                           analysis->getOp().getIndexVars()[i]->getName() +
                           "') has the explicit extent " +
                           Twine(varExtents[i]) + " but the output shape " +
                           formatShape(shape) + " gives it " +
                           Twine(shape[i]));
  outputShape.assign(shape.begin(), shape.end());
  for (unsigned i = 0; i != rank; ++i)
    varExtents[i] = shape[i];
  outputBound = true;
  return checkIndexArithmetic();
}

llvm::Expected<Binding> Binding::bind(const OperatorAnalysis &analysis,
                                      ArrayRef<Shape> inputShapes,
                                      ArrayRef<int64_t> params) {
  Binding binding(analysis);
  if (llvm::Error err = binding.bindInputs(inputShapes, params))
    return err;
  if (llvm::Error err = binding.bindVarExtents())
    return err;
  return binding;
}

llvm::Expected<Binding> Binding::create(const OperatorAnalysis &analysis,
                                        ArrayRef<Shape> inputShapes,
                                        ArrayRef<int64_t> params) {
  llvm::Expected<Binding> binding = bind(analysis, inputShapes, params);
  if (!binding)
    return binding.takeError();
  // The output variables' extents are 0 until the output shape is bound,
  // which checks again.
  if (llvm::Error err = binding->checkIndexArithmetic())
    return err;
  return binding;
}

llvm::Expected<Binding> Binding::create(const OperatorAnalysis &analysis,
                                        ArrayRef<Shape> inputShapes,
                                        ArrayRef<int64_t> outputShape,
                                        ArrayRef<int64_t> params) {
  llvm::Expected<Binding> binding = bind(analysis, inputShapes, params);
  if (!binding)
    return binding.takeError();
  if (llvm::Error err = binding->setOutputShape(outputShape))
    return err;
  return binding;
}

llvm::Expected<SmallVector<int64_t, 4>>
analysis::orderParams(const tdl::OpDecl &op,
                      ArrayRef<std::pair<StringRef, int64_t>> namedValues) {
  auto fail = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "operator '" + op.getName() + "': " + msg);
  };
  SmallVector<int64_t, 4> values(op.getParams().size(), 0);
  SmallVector<bool, 4> seen(op.getParams().size(), false);
  for (const auto &[name, value] : namedValues) {
    const ParamDecl *param = op.lookupParam(name);
    if (!param)
      return fail("has no param '" + name + "'");
    values[param->getPosition()] = value;
    seen[param->getPosition()] = true;
  }
  for (const auto &param : op.getParams())
    if (!seen[param->getPosition()])
      return fail("no value for param '" + param->getName() + "'");
  return values;
}
