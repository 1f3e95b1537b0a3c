//===- StrategyDiscovery.cpp - The basic strategies of an operator --------===//
//
// This file implements strategy discovery: every output variable gives a
// `split` (each worker computes a sub-box of the output), and every
// reduction variable gives a `reduce` (each worker reduces over part of the
// variable's range into a full-size partial output, and the partials are
// combined with the reducer) provided that combining partials is correct:
// every expression between the operator's root and the reduction must
// distribute over the reducer. For Sum that is negation, multiplication by
// a factor without the reduction, division of the reduction, and an
// enclosing Sum; for Max and Min, adding or subtracting a term without the
// reduction and an enclosing reduction of the same kind; for Prod, an
// enclosing Prod. `bias[co] + Sum(...)` has no reduce strategy: summing
// the partials would add the bias once per worker. An opaque operator
// (`opaque(READS...)`) splits only along output variables that its reads
// index affinely or not at all.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/OperatorAnalysis.h"

#include "tofu/TDL/ExprWalk.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;

namespace {

/// The chain of expressions from `e` down to `target`, `target` excluded.
bool findPath(const Expr &e, const Expr *target,
              llvm::SmallVectorImpl<const Expr *> &path) {
  if (&e == target)
    return true;
  path.push_back(&e);
  bool found = false;
  switch (e.getKind()) {
  case Expr::Kind::TensorRead:
    for (const ExprPtr &i : cast<TensorReadExpr>(e).getIndices())
      found = found || findPath(*i, target, path);
    break;
  case Expr::Kind::Call:
    for (const ExprPtr &a : cast<CallExpr>(e).getArgs())
      found = found || findPath(*a, target, path);
    break;
  case Expr::Kind::Reduce:
    found = findPath(cast<ReduceExpr>(e).getBody(), target, path);
    break;
  case Expr::Kind::Unary:
    found = findPath(cast<UnaryExpr>(e).getOperand(), target, path);
    break;
  case Expr::Kind::Binary:
    found = findPath(cast<BinaryExpr>(e).getLHS(), target, path) ||
            findPath(cast<BinaryExpr>(e).getRHS(), target, path);
    break;
  default:
    break;
  }
  if (!found)
    path.pop_back();
  return found;
}

/// True if `parent` distributes over `reducer` applied to its operand
/// `child`.
bool distributes(const Expr &parent, const Expr &child, Reducer reducer) {
  if (auto *red = dyn_cast<ReduceExpr>(&parent))
    return red->getReducer() == reducer;
  if (auto *un = dyn_cast<UnaryExpr>(&parent))
    return reducer == Reducer::Sum && un->getOp() == UnaryOp::Neg;
  auto *bin = dyn_cast<BinaryExpr>(&parent);
  if (!bin)
    return false;
  bool onLeft = &bin->getLHS() == &child;
  switch (reducer) {
  case Reducer::Sum:
    return bin->getOp() == BinaryOp::Mul ||
           (bin->getOp() == BinaryOp::Div && onLeft);
  case Reducer::Max:
  case Reducer::Min:
    return bin->getOp() == BinaryOp::Add ||
           (bin->getOp() == BinaryOp::Sub && onLeft);
  case Reducer::Prod:
    return false;
  }
  return false;
}

/// Why a reduce along a variable of `red` is not a strategy, or "" if it is.
std::string checkReduce(const OpDecl &op, const ReduceExpr &red) {
  SmallVector<const Expr *, 8> path;
  if (!findPath(op.getBody(), &red, path))
    return "its reduction is not in the body";
  for (size_t i = 0, e = path.size(); i != e; ++i) {
    const Expr &child = i + 1 == e ? static_cast<const Expr &>(red) : *path[i + 1];
    if (!distributes(*path[i], child, red.getReducer()))
      return ("the partial results of " + getReducerName(red.getReducer()) +
              " do not combine through the enclosing expression")
          .str();
  }
  return "";
}

/// For an opaque operator, the output variables that a listed read indexes
/// other than affinely: a worker's part of the output cannot be told from
/// the regions it reads, so they give no split.
uint64_t findNonAffineOutputVars(const OpDecl &op) {
  uint64_t mask = 0;
  for (const TensorReadExpr *read : collectTensorReads(op))
    for (unsigned d = 0, n = read->getNumIndices(); d != n; ++d) {
      if (read->getIndexKind(d) == IndexKind::Affine)
        continue;
      walkExpr(read->getIndex(d), [&](const Expr &e) {
        auto *name = dyn_cast<NameExpr>(&e);
        if (name && name->getIndexVar() && name->getIndexVar()->isOutput())
          mask |= uint64_t(1) << name->getIndexVar()->getId();
      });
    }
  return mask;
}

} // namespace

void OperatorAnalysis::discoverStrategies() {
  uint64_t noSplit = op->isOpaque() ? findNonAffineOutputVars(*op) : 0;
  for (const auto &var : op->getOutputVars()) {
    if (noSplit >> var->getId() & 1) {
      notes.push_back({var->getLoc(), ("no split strategy along '" +
                                       var->getName() +
                                       "': the opaque operator's reads "
                                       "index it other than affinely")
                                          .str()});
      continue;
    }
    strategies.push_back({Strategy::Kind::Split, var->getId()});
  }
  for (const IndexVarDecl *var : op->getReductionVars()) {
    const ReduceExpr &red = *var->getReduction();
    std::string why = checkReduce(*op, red);
    if (why.empty()) {
      strategies.push_back(
          {Strategy::Kind::Reduce, var->getId(), red.getReducer()});
      continue;
    }
    notes.push_back({var->getLoc(), ("no reduce strategy along '" +
                                     var->getName() + "': " + why)
                                        .str()});
  }
}
