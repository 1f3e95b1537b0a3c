//===- ExprWalk.cpp - Pre-order traversal of TDL expressions --------------===//
//
// This file implements walkExpr and the collectors built on it.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace tofu;
using namespace tofu::tdl;

void tdl::walkExpr(const Expr &e, llvm::function_ref<void(const Expr &)> fn) {
  fn(e);
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::FloatLiteral:
  case Expr::Kind::Name:
    return;
  case Expr::Kind::TensorRead:
    for (const ExprPtr &index : cast<TensorReadExpr>(e).getIndices())
      walkExpr(*index, fn);
    return;
  case Expr::Kind::Call:
    for (const ExprPtr &arg : cast<CallExpr>(e).getArgs())
      walkExpr(*arg, fn);
    return;
  case Expr::Kind::Reduce:
    walkExpr(cast<ReduceExpr>(e).getBody(), fn);
    return;
  case Expr::Kind::Unary:
    walkExpr(cast<UnaryExpr>(e).getOperand(), fn);
    return;
  case Expr::Kind::Binary:
    walkExpr(cast<BinaryExpr>(e).getLHS(), fn);
    walkExpr(cast<BinaryExpr>(e).getRHS(), fn);
    return;
  }
}

std::vector<const TensorReadExpr *> tdl::collectTensorReads(const OpDecl &op) {
  std::vector<const TensorReadExpr *> reads;
  walkExpr(op.getBody(), [&](const Expr &e) {
    if (auto *read = dyn_cast<TensorReadExpr>(&e))
      reads.push_back(read);
  });
  return reads;
}

llvm::SmallVector<unsigned, 4> tdl::collectFreeIndexVars(const ReduceExpr &e) {
  llvm::SmallSet<unsigned, 8> used, bound;
  walkExpr(e, [&](const Expr &sub) {
    if (auto *name = dyn_cast<NameExpr>(&sub)) {
      if (const IndexVarDecl *var = name->getIndexVar())
        used.insert(var->getId());
    } else if (auto *reduce = dyn_cast<ReduceExpr>(&sub)) {
      for (const auto &var : reduce->getVars())
        bound.insert(var->getId());
    }
  });
  llvm::SmallVector<unsigned, 4> free;
  for (unsigned id : used)
    if (!bound.count(id))
      free.push_back(id);
  llvm::sort(free);
  return free;
}
