//===- ExprPrinter.cpp - Infix printing of TDL expressions ----------------===//
//
// This file implements printExpr, which renders an expression back in TDL
// syntax. Parentheses are added only where precedence or associativity
// requires them, so `x + dx` prints as written and `(a - b) - c` as
// `a - b - c`.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Printers.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace tofu;
using namespace tofu::tdl;

namespace {

/// Binding strength of an expression as an operand; primaries bind
/// tightest.
unsigned precedenceOf(const Expr &e) {
  if (auto *bin = dyn_cast<BinaryExpr>(&e))
    return getBinaryOpPrecedence(bin->getOp());
  if (isa<UnaryExpr>(e))
    return 6;
  return 7;
}

void print(llvm::raw_ostream &os, const Expr &e);

/// Prints the shortest decimal form that reads back as the same double,
/// always recognisable as a float literal (`1.0`, not `1`).
void printFloat(llvm::raw_ostream &os, double value) {
  char buffer[32];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (strtod(buffer, nullptr) == value)
      break;
  }
  os << buffer;
  if (StringRef(buffer).find_first_of(".eEn") == StringRef::npos)
    os << ".0";
}

void printOperand(llvm::raw_ostream &os, const Expr &e, unsigned minPrec) {
  bool parens = precedenceOf(e) < minPrec;
  if (parens)
    os << '(';
  print(os, e);
  if (parens)
    os << ')';
}

template <typename Range>
void printList(llvm::raw_ostream &os, const Range &exprs) {
  llvm::interleaveComma(exprs, os,
                        [&](const ExprPtr &arg) { print(os, *arg); });
}

void print(llvm::raw_ostream &os, const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    os << cast<IntLiteralExpr>(e).getValue();
    return;
  case Expr::Kind::FloatLiteral:
    printFloat(os, cast<FloatLiteralExpr>(e).getValue());
    return;
  case Expr::Kind::Name:
    if (cast<NameExpr>(e).isEllipsis())
      os << "...";
    os << cast<NameExpr>(e).getName();
    return;
  case Expr::Kind::TensorRead: {
    const auto &read = cast<TensorReadExpr>(e);
    os << read.getTensorName() << '[';
    printList(os, read.getIndices());
    os << ']';
    return;
  }
  case Expr::Kind::Call: {
    const auto &call = cast<CallExpr>(e);
    os << call.getCallee();
    // The bare body `opaque` is a call without arguments.
    if (call.getNumArgs() == 0 && call.getCallee() == "opaque")
      return;
    os << '(';
    printList(os, call.getArgs());
    os << ')';
    return;
  }
  case Expr::Kind::Reduce: {
    const auto &red = cast<ReduceExpr>(e);
    os << getReducerName(red.getReducer()) << "(lambda ";
    printLambdaVars(os, red.getVars());
    os << ": ";
    print(os, red.getBody());
    os << ')';
    return;
  }
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    os << getUnaryOpSpelling(un.getOp());
    printOperand(os, un.getOperand(), precedenceOf(un));
    return;
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    unsigned prec = getBinaryOpPrecedence(bin.getOp());
    // Left-associative: the right operand needs parentheses at equal
    // precedence.
    printOperand(os, bin.getLHS(), prec);
    os << ' ' << getBinaryOpSpelling(bin.getOp()) << ' ';
    printOperand(os, bin.getRHS(), prec + 1);
    return;
  }
  }
}

} // namespace

void tdl::printExpr(llvm::raw_ostream &os, const Expr &e) { print(os, e); }

void tdl::printLambdaVars(llvm::raw_ostream &os,
                          ArrayRef<std::unique_ptr<IndexVarDecl>> vars) {
  llvm::interleaveComma(vars, os, [&](const auto &var) {
    if (var->isEllipsis())
      os << "...";
    os << var->getName();
    if (const Expr *extent = var->getExtentExpr()) {
      os << " < ";
      print(os, *extent);
    }
  });
}

void tdl::printParamList(llvm::raw_ostream &os, const OpDecl &op) {
  if (op.getParams().empty())
    return;
  os << '<';
  llvm::interleaveComma(op.getParams(), os, [&](const auto &p) {
    os << p->getName() << (p->isReal() ? ": real" : "");
  });
  os << '>';
}

void tdl::printSignature(llvm::raw_ostream &os, const OpDecl &op) {
  os << op.getName();
  printParamList(os, op);
  os << '(';
  llvm::interleaveComma(op.getTensors(), os,
                        [&](const auto &t) { os << t->getName(); });
  os << ')';
  if (const Expr *guard = op.getGuard()) {
    os << " where ";
    print(os, *guard);
  }
}

std::string tdl::exprToString(const Expr &e) {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os, e);
  return os.str();
}
