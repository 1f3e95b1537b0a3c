//===- SemaGeneric.cpp - Checks of the generic-operator extensions -------===//
//
// This file implements the OpChecker methods for what generic operators
// add to TDL: guards, ellipsis indices and the rank they give a tensor,
// `dim`/`rank` calls, `opaque` bodies, and the rule that real params stay
// out of indices, extents and guards.
//
//===----------------------------------------------------------------------===//

#include "OpChecker.h"

#include "tofu/TDL/ExprWalk.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

void OpChecker::checkGuard(Expr &guard) {
  unsigned errorsBefore = diags.getNumErrors();
  inGuard = true;
  checkExpr(guard);
  inGuard = false;
  if (diags.getNumErrors() != errorsBefore)
    return;
  reportRealParams(guard, "a guard");
  if (diags.getNumErrors() == errorsBefore &&
      guard.getType() == ValueType::Real)
    diags.error(guard.getLoc(), "a guard must be an integer or boolean "
                                "expression, not a real one");
}

void OpChecker::reportRealParams(const Expr &e, const Twine &where) {
  walkExpr(e, [&](const Expr &sub) {
    if (auto *name = dyn_cast<NameExpr>(&sub))
      if (name->getParam() && name->getParam()->isReal())
        diags.error(name->getLoc(), "real param '" + name->getName() +
                                        "' cannot be used in " + where +
                                        "; only int params can");
  });
}

/// Checks `...i` as an index of `read`; true if it counts as the read's
/// ellipsis, false after an error.
bool OpChecker::checkEllipsisIndex(TensorReadExpr &read, NameExpr &index) {
  index.setType(ValueType::Int);
  const IndexVarDecl *var = op.getEllipsisVar();
  if (!var) {
    diags.error(index.getLoc(), "'..." + index.getName() +
                                    "' but the output lambda has no ellipsis "
                                    "variable");
    return false;
  }
  if (var->getName() != index.getName()) {
    diags.error(index.getLoc(), "'..." + index.getName() +
                                    "' does not name the ellipsis variable '..." +
                                    var->getName() + "'");
    return false;
  }
  for (const ExprPtr &other : read.getIndices()) {
    auto *name = dyn_cast<NameExpr>(other.get());
    if (name == &index)
      break;
    if (name && name->isEllipsis()) {
      diags.error(index.getLoc(), "a tensor read may use '...' only once");
      return false;
    }
  }
  index.resolve(var);
  return true;
}

/// Fixes the rank of `tensor` from the read `e` (which has `numEllipses`
/// ellipsis indices), or reports a read that disagrees with an earlier one.
void OpChecker::fixRank(TensorReadExpr &e, TensorDecl &tensor,
                        unsigned numEllipses) {
  StringRef name = tensor.getName();
  unsigned named = e.getNumIndices() - numEllipses;
  bool polymorphic = numEllipses != 0;
  bool unfixed = tensor.getRank() < 0 && !tensor.isRankPolymorphic();
  if (unfixed && polymorphic)
    return tensor.setRankPolymorphic(named, e.getLoc());
  if (unfixed)
    return tensor.setRank(named, e.getLoc());
  if (polymorphic != tensor.isRankPolymorphic()) {
    diags.error(e.getLoc(), "tensor '" + name + "' is read " +
                                (polymorphic ? "with" : "without") +
                                " '...' here, but " +
                                (polymorphic ? "without" : "with") +
                                " it elsewhere");
    diags.note(tensor.getRankLoc(), "'" + name + "' first read here");
    return;
  }
  unsigned before =
      polymorphic ? tensor.getNumNamedDims() : unsigned(tensor.getRank());
  if (before == named)
    return;
  StringRef what = polymorphic ? "named indices" : "indices";
  diags.error(e.getLoc(), "wrong number of " + what + " for tensor '" + name +
                              "': " + Twine(named) + " here, but " +
                              Twine(before) + " elsewhere");
  diags.note(tensor.getRankLoc(), "'" + name + "' first read with " +
                                      Twine(before) + " " + what + " here");
}

/// Checks `dim(T, K)` and `rank(T)`: T names a tensor, K is an integer
/// literal (possibly negated). They are integers known at instantiation.
bool OpChecker::checkShapeQuery(CallExpr &e, Builtin builtin) {
  e.setType(ValueType::Int);
  sawShapeQuery = true;
  auto *tensor = dyn_cast<NameExpr>(&e.getArg(0));
  if (!tensor || tensor->isEllipsis() || !op.lookupTensor(tensor->getName())) {
    diags.error(e.getArg(0).getLoc(), "the first argument of '" +
                                          e.getCallee() +
                                          "' must name a tensor of the "
                                          "operator");
    return false;
  }
  if (builtin == Builtin::Rank)
    return true;
  const Expr *k = &e.getArg(1);
  if (auto *neg = dyn_cast<UnaryExpr>(k))
    if (neg->getOp() == UnaryOp::Neg)
      k = &neg->getOperand();
  if (!isa<IntLiteralExpr>(k)) {
    diags.error(e.getArg(1).getLoc(), "the second argument of 'dim' must be "
                                      "an integer literal");
    return false;
  }
  checkExpr(e.getArg(1));
  return true;
}

/// Checks `opaque(READS...)`: the whole body of the operator, with tensor
/// reads as arguments in which unknown names are free indices.
bool OpChecker::checkOpaque(CallExpr &e) {
  e.setType(ValueType::Real);
  if (&e != &op.getBody()) {
    diags.error(e.getLoc(), "'opaque' must be the whole body of an operator");
    return false;
  }
  inOpaque = true;
  for (unsigned i = 0, n = e.getNumArgs(); i != n; ++i) {
    if (!isa<TensorReadExpr>(e.getArg(i)))
      diags.error(e.getArg(i).getLoc(),
                  "the arguments of 'opaque' must be tensor reads");
    else
      checkExpr(e.getArg(i));
  }
  inOpaque = false;
  return true;
}
