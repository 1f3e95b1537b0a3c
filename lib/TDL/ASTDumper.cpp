//===- ASTDumper.cpp - Tree dump of the TDL syntax tree -------------------===//
//
// This file implements dumpAST: one node per line, children indented by two
// spaces, in the spirit of clang's -ast-dump.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Printers.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

class ASTDumper {
public:
  ASTDumper(llvm::raw_ostream &os, const llvm::SourceMgr &srcMgr)
      : os(os), srcMgr(srcMgr) {}

  void dumpOp(const OpDecl &op);

private:
  llvm::raw_ostream &line() { return os.indent(2 * depth); }
  void printLoc(SMLoc loc) {
    auto [lineNo, col] = srcMgr.getLineAndColumn(loc);
    os << " <" << lineNo << ':' << col << ">\n";
  }
  void dumpVar(const IndexVarDecl &var);
  void dumpExpr(const Expr &e);

  llvm::raw_ostream &os;
  const llvm::SourceMgr &srcMgr;
  unsigned depth = 0;
};

} // namespace

void ASTDumper::dumpOp(const OpDecl &op) {
  line() << "OpDecl " << op.getName();
  printLoc(op.getLoc());
  ++depth;
  for (const auto &p : op.getParams()) {
    line() << "ParamDecl " << p->getName() << (p->isReal() ? " real" : "");
    printLoc(p->getLoc());
  }
  for (const auto &t : op.getTensors()) {
    line() << "TensorDecl " << t->getName();
    printLoc(t->getLoc());
  }
  if (const Expr *guard = op.getGuard()) {
    line() << "Guard\n";
    ++depth;
    dumpExpr(*guard);
    --depth;
  }
  for (const auto &v : op.getOutputVars())
    dumpVar(*v);
  dumpExpr(op.getBody());
  --depth;
}

void ASTDumper::dumpVar(const IndexVarDecl &var) {
  line() << (var.isOutput() ? "OutputVar " : "ReductionVar ")
         << (var.isEllipsis() ? "..." : "") << var.getName();
  printLoc(var.getLoc());
  if (const Expr *extent = var.getExtentExpr()) {
    ++depth;
    line() << "Extent\n";
    ++depth;
    dumpExpr(*extent);
    depth -= 2;
  }
}

void ASTDumper::dumpExpr(const Expr &e) {
  auto children = [&](auto body) {
    ++depth;
    body();
    --depth;
  };
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    line() << "IntLiteral " << cast<IntLiteralExpr>(e).getValue() << '\n';
    return;
  case Expr::Kind::FloatLiteral:
    line() << "FloatLiteral " << exprToString(e) << '\n';
    return;
  case Expr::Kind::Name:
    line() << "Name " << exprToString(e) << '\n';
    return;
  case Expr::Kind::TensorRead: {
    const auto &read = cast<TensorReadExpr>(e);
    line() << "TensorRead " << read.getTensorName() << '\n';
    children([&] {
      for (const ExprPtr &index : read.getIndices())
        dumpExpr(*index);
    });
    return;
  }
  case Expr::Kind::Call: {
    const auto &call = cast<CallExpr>(e);
    line() << "Call " << call.getCallee() << '\n';
    children([&] {
      for (const ExprPtr &arg : call.getArgs())
        dumpExpr(*arg);
    });
    return;
  }
  case Expr::Kind::Reduce: {
    const auto &red = cast<ReduceExpr>(e);
    line() << "Reduce " << getReducerName(red.getReducer()) << '\n';
    children([&] {
      for (const auto &var : red.getVars())
        dumpVar(*var);
      dumpExpr(red.getBody());
    });
    return;
  }
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    line() << "Unary " << getUnaryOpSpelling(un.getOp()) << '\n';
    children([&] { dumpExpr(un.getOperand()); });
    return;
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    line() << "Binary " << getBinaryOpSpelling(bin.getOp()) << '\n';
    children([&] {
      dumpExpr(bin.getLHS());
      dumpExpr(bin.getRHS());
    });
    return;
  }
  }
}

void tdl::dumpAST(llvm::raw_ostream &os, const OpDecl &op,
                  const llvm::SourceMgr &srcMgr) {
  ASTDumper(os, srcMgr).dumpOp(op);
}
