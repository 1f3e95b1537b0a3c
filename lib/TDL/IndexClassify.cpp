//===- IndexClassify.cpp - The kind of each tensor index ------------------===//
//
// This file implements the classification of tensor indices that Sema
// records (IndexKind: affine, divmod, data-dependent, opaque) and the
// constant-expression test it rests on.
//
//===----------------------------------------------------------------------===//

#include "OpChecker.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

bool tdl::isConstantExpr(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::FloatLiteral:
    return true;
  case Expr::Kind::Name:
    return cast<NameExpr>(e).getParam() != nullptr;
  case Expr::Kind::Unary:
    return isConstantExpr(cast<UnaryExpr>(e).getOperand());
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    return isConstantExpr(bin.getLHS()) && isConstantExpr(bin.getRHS());
  }
  case Expr::Kind::Call: {
    const auto &call = cast<CallExpr>(e);
    if (call.getBuiltin() == Builtin::Dim || call.getBuiltin() == Builtin::Rank)
      return true;
    return llvm::all_of(call.getArgs(),
                        [](const ExprPtr &arg) { return isConstantExpr(*arg); });
  }
  case Expr::Kind::TensorRead:
  case Expr::Kind::Reduce:
    return false;
  }
  return false;
}

/// The less exact of two index kinds: Affine < DivMod < Opaque <
/// DataDependent.
static IndexKind join(IndexKind a, IndexKind b) {
  auto rank = [](IndexKind k) {
    switch (k) {
    case IndexKind::Affine: return 0;
    case IndexKind::DivMod: return 1;
    case IndexKind::Opaque: return 2;
    case IndexKind::DataDependent: return 3;
    }
    return 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

IndexKind detail::classifyIndex(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return IndexKind::Affine;
  case Expr::Kind::Name: {
    // An unresolved name is a free index inside `opaque(...)`.
    const auto &name = cast<NameExpr>(e);
    return name.getIndexVar() || name.getParam() ? IndexKind::Affine
                                                 : IndexKind::Opaque;
  }
  case Expr::Kind::FloatLiteral:
    return IndexKind::Opaque;
  case Expr::Kind::TensorRead:
    return IndexKind::DataDependent;
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    IndexKind operand = classifyIndex(un.getOperand());
    return un.getOp() == UnaryOp::Neg ? operand
                                      : join(operand, IndexKind::Opaque);
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    IndexKind operands =
        join(classifyIndex(bin.getLHS()), classifyIndex(bin.getRHS()));
    bool lhsConst = isConstantExpr(bin.getLHS());
    bool rhsConst = isConstantExpr(bin.getRHS());
    switch (bin.getOp()) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return operands;
    case BinaryOp::Mul:
      return lhsConst || rhsConst ? operands
                                  : join(operands, IndexKind::Opaque);
    case BinaryOp::Div:
    case BinaryOp::Rem: {
      if (lhsConst && rhsConst)
        return IndexKind::Affine;
      auto *lit = dyn_cast<IntLiteralExpr>(&bin.getRHS());
      bool positiveConstant = rhsConst && (!lit || lit->getValue() > 0);
      return join(operands,
                  positiveConstant ? IndexKind::DivMod : IndexKind::Opaque);
    }
    default:
      return join(operands, IndexKind::Opaque);
    }
  }
  case Expr::Kind::Call: {
    IndexKind kind = IndexKind::Opaque;
    for (const ExprPtr &arg : cast<CallExpr>(e).getArgs())
      kind = join(kind, classifyIndex(*arg));
    return kind;
  }
  case Expr::Kind::Reduce:
    return join(IndexKind::Opaque, classifyIndex(cast<ReduceExpr>(e).getBody()));
  }
  return IndexKind::Opaque;
}
