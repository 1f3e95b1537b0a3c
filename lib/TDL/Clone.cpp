//===- Clone.cpp - Deep copies of TDL operators ---------------------------===//
//
// This file implements OpCloner: a recursive copy of the syntax tree that
// routes output variables, read indices, calls and the guard through
// overridable hooks.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Clone.h"

using namespace tofu;
using namespace tofu::tdl;

OpCloner::~OpCloner() = default;

std::unique_ptr<IndexVarDecl> OpCloner::cloneVar(const IndexVarDecl &var) {
  ExprPtr extent;
  if (const Expr *e = var.getExtentExpr())
    extent = cloneExpr(*e);
  return std::make_unique<IndexVarDecl>(var.getName().str(), var.getLoc(),
                                        var.getRole(), std::move(extent),
                                        var.isEllipsis());
}

void OpCloner::cloneOutputVar(const IndexVarDecl &var, IndexVarList &out) {
  out.push_back(cloneVar(var));
}

void OpCloner::cloneIndex(const TensorReadExpr &, const Expr &index,
                          std::vector<ExprPtr> &out) {
  out.push_back(cloneExpr(index));
}

ExprPtr OpCloner::cloneCall(const CallExpr &call) {
  std::vector<ExprPtr> args;
  for (const ExprPtr &arg : call.getArgs())
    args.push_back(cloneExpr(*arg));
  return std::make_unique<CallExpr>(call.getLoc(), call.getCallee().str(),
                                    std::move(args));
}

ExprPtr OpCloner::cloneGuard(const Expr &guard) { return cloneExpr(guard); }

ExprPtr OpCloner::cloneExpr(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return std::make_unique<IntLiteralExpr>(e.getLoc(),
                                            cast<IntLiteralExpr>(e).getValue());
  case Expr::Kind::FloatLiteral:
    return std::make_unique<FloatLiteralExpr>(
        e.getLoc(), cast<FloatLiteralExpr>(e).getValue());
  case Expr::Kind::Name: {
    const auto &name = cast<NameExpr>(e);
    return std::make_unique<NameExpr>(e.getLoc(), name.getName().str(),
                                      name.isEllipsis());
  }
  case Expr::Kind::TensorRead: {
    const auto &read = cast<TensorReadExpr>(e);
    std::vector<ExprPtr> indices;
    for (const ExprPtr &index : read.getIndices())
      cloneIndex(read, *index, indices);
    return std::make_unique<TensorReadExpr>(
        e.getLoc(), read.getTensorName().str(), std::move(indices));
  }
  case Expr::Kind::Call:
    return cloneCall(cast<CallExpr>(e));
  case Expr::Kind::Reduce: {
    const auto &red = cast<ReduceExpr>(e);
    IndexVarList vars;
    for (const auto &var : red.getVars())
      vars.push_back(cloneVar(*var));
    return std::make_unique<ReduceExpr>(e.getLoc(), red.getReducer(),
                                        std::move(vars),
                                        cloneExpr(red.getBody()));
  }
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    return std::make_unique<UnaryExpr>(e.getLoc(), un.getOp(),
                                       cloneExpr(un.getOperand()));
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    return std::make_unique<BinaryExpr>(e.getLoc(), bin.getOp(),
                                        cloneExpr(bin.getLHS()),
                                        cloneExpr(bin.getRHS()));
  }
  }
  return nullptr;
}

std::unique_ptr<OpDecl> OpCloner::cloneOp(const OpDecl &op) {
  std::vector<std::unique_ptr<ParamDecl>> params;
  for (const auto &p : op.getParams())
    params.push_back(std::make_unique<ParamDecl>(
        p->getName().str(), p->getLoc(), p->getPosition(), p->getType()));
  std::vector<std::unique_ptr<TensorDecl>> tensors;
  for (const auto &t : op.getTensors())
    tensors.push_back(std::make_unique<TensorDecl>(
        t->getName().str(), t->getLoc(), t->getPosition()));
  IndexVarList outputVars;
  for (const auto &v : op.getOutputVars())
    cloneOutputVar(*v, outputVars);
  ExprPtr guard;
  if (const Expr *g = op.getGuard())
    guard = cloneGuard(*g);
  return std::make_unique<OpDecl>(op.getName().str(), op.getLoc(),
                                  std::move(params), std::move(tensors),
                                  std::move(outputVars),
                                  cloneExpr(op.getBody()), std::move(guard));
}
