//===- IndexCompiler.cpp - Compile index expressions to programs ----------===//
//
// This file implements IndexCompiler: an index expression is first tried as
// one affine form (the exact case); failing that, `+ - *const /const %const`
// nodes become instructions over affine leaves; anything else is left to
// the caller as the whole dimension. Constant subexpressions over params
// become polynomials in the coefficient table.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/IndexProgram.h"

#include "tofu/TDL/AST.h"

#include "llvm/Support/MathExtras.h"

using namespace tofu;
using namespace tofu::analysis;
using namespace tofu::tdl;


//===----------------------------------------------------------------------===//
// Constant evaluation
//===----------------------------------------------------------------------===//

static llvm::Optional<int64_t> evalCall(const CallExpr &call,
                                        ArrayRef<int64_t> params) {
  SmallVector<int64_t, 3> args;
  for (const ExprPtr &arg : call.getArgs()) {
    llvm::Optional<int64_t> v = evaluateConstant(*arg, params);
    if (!v)
      return llvm::None;
    args.push_back(*v);
  }
  if (!call.getBuiltin())
    return llvm::None;
  return applyIntBuiltin(*call.getBuiltin(), args);
}

llvm::Optional<int64_t> analysis::evaluateConstant(const Expr &e,
                                                   ArrayRef<int64_t> params) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return cast<IntLiteralExpr>(e).getValue();
  case Expr::Kind::Name:
    if (const ParamDecl *p = cast<NameExpr>(e).getParam())
      if (p->getPosition() < params.size())
        return params[p->getPosition()];
    return llvm::None;
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    llvm::Optional<int64_t> v = evaluateConstant(un.getOperand(), params);
    if (!v)
      return llvm::None;
    if (un.getOp() != UnaryOp::Neg)
      return int64_t(!*v);
    if (*v == INT64_MIN)
      return llvm::None;
    return -*v;
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    llvm::Optional<int64_t> a = evaluateConstant(bin.getLHS(), params);
    llvm::Optional<int64_t> b = evaluateConstant(bin.getRHS(), params);
    if (!a || !b)
      return llvm::None;
    // Overflow is no value, like division by zero.
    int64_t r;
    switch (bin.getOp()) {
    case BinaryOp::Add:
      return llvm::AddOverflow(*a, *b, r) ? llvm::None : llvm::Optional<int64_t>(r);
    case BinaryOp::Sub:
      return llvm::SubOverflow(*a, *b, r) ? llvm::None : llvm::Optional<int64_t>(r);
    case BinaryOp::Mul:
      return llvm::MulOverflow(*a, *b, r) ? llvm::None : llvm::Optional<int64_t>(r);
    case BinaryOp::Div:
    case BinaryOp::Rem:
      // INT64_MIN / -1 overflows too.
      if (*a == INT64_MIN && *b == -1)
        return llvm::None;
      break;
    default:
      break;
    }
    return applyIntBinary(bin.getOp(), *a, *b);
  }
  case Expr::Kind::Call:
    return evalCall(cast<CallExpr>(e), params);
  default:
    return llvm::None;
  }
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

/// An affine form under construction, with polynomial coefficients.
struct IndexCompiler::Linear {
  SmallVector<std::pair<unsigned, Poly>, 2> terms;
  Poly constant;

  void addTerm(unsigned var, const Poly &coef) {
    for (auto &[v, c] : terms)
      if (v == var) {
        c = c + coef;
        return;
      }
    terms.push_back({var, coef});
  }
  void add(const Linear &rhs, const Poly &scale) {
    for (const auto &[v, c] : rhs.terms)
      addTerm(v, c * scale);
    constant = constant + rhs.constant * scale;
  }
};

unsigned IndexCompiler::addCoefficient(Poly p) {
  for (unsigned i = 0, e = coefficients.size(); i != e; ++i)
    if (coefficients[i] == p)
      return i;
  coefficients.push_back(std::move(p));
  return coefficients.size() - 1;
}

Poly IndexCompiler::compileConstant(const Expr &e) {
  if (auto *lit = dyn_cast<IntLiteralExpr>(&e))
    return Poly(Rational(lit->getValue()));
  if (auto *name = dyn_cast<NameExpr>(&e))
    if (const ParamDecl *p = name->getParam())
      return Poly::atom(Atom::get(Atom::Kind::Param, p->getPosition()));
  if (auto *un = dyn_cast<UnaryExpr>(&e))
    if (un->getOp() == UnaryOp::Neg)
      return -compileConstant(un->getOperand());
  if (auto *bin = dyn_cast<BinaryExpr>(&e)) {
    switch (bin->getOp()) {
    case BinaryOp::Add:
      return compileConstant(bin->getLHS()) + compileConstant(bin->getRHS());
    case BinaryOp::Sub:
      return compileConstant(bin->getLHS()) - compileConstant(bin->getRHS());
    case BinaryOp::Mul:
      return compileConstant(bin->getLHS()) * compileConstant(bin->getRHS());
    default:
      break;
    }
  }
  opaqueExprs.push_back(&e);
  return Poly::atom(Atom::get(Atom::Kind::Opaque, opaqueExprs.size() - 1));
}

bool IndexCompiler::linearize(const Expr &e, Linear &out) {
  if (isConstantExpr(e)) {
    if (e.getType() != ValueType::Int)
      return false;
    out.constant = compileConstant(e);
    return true;
  }
  if (auto *name = dyn_cast<NameExpr>(&e)) {
    if (!name->getIndexVar())
      return false;
    out.addTerm(name->getIndexVar()->getId(), Poly(Rational(1)));
    return true;
  }
  if (auto *un = dyn_cast<UnaryExpr>(&e)) {
    Linear inner;
    if (un->getOp() != UnaryOp::Neg || !linearize(un->getOperand(), inner))
      return false;
    out.add(inner, Poly(Rational(-1)));
    return true;
  }
  auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin)
    return false;
  Linear lhs, rhs;
  switch (bin->getOp()) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (!linearize(bin->getLHS(), lhs) || !linearize(bin->getRHS(), rhs))
      return false;
    out.add(lhs, Poly(Rational(1)));
    out.add(rhs, Poly(Rational(bin->getOp() == BinaryOp::Add ? 1 : -1)));
    return true;
  case BinaryOp::Mul: {
    bool lhsConst = isConstantExpr(bin->getLHS());
    const Expr &constSide = lhsConst ? bin->getLHS() : bin->getRHS();
    const Expr &varSide = lhsConst ? bin->getRHS() : bin->getLHS();
    if (!isConstantExpr(constSide) || constSide.getType() != ValueType::Int ||
        !linearize(varSide, lhs))
      return false;
    out.add(lhs, compileConstant(constSide));
    return true;
  }
  default:
    return false;
  }
}

unsigned IndexCompiler::addAffine(const Linear &lin) {
  AffineForm form;
  for (const auto &[var, coef] : lin.terms)
    if (!coef.isZero())
      form.terms.push_back({var, addCoefficient(coef)});
  form.constSlot = addCoefficient(lin.constant);
  affineForms.push_back(std::move(form));
  return affineForms.size() - 1;
}

bool IndexCompiler::emit(const Expr &e, IndexProgram &prog, unsigned depth) {
  if (depth > MaxIndexDepth)
    return false;
  prog.maxDepth = std::max(prog.maxDepth, depth);
  Linear lin;
  if (linearize(e, lin)) {
    prog.insts.push_back({IndexInst::Op::Affine, addAffine(lin)});
    for (const auto &term : lin.terms)
      if (!term.second.isZero())
        prog.varMask |= uint64_t(1) << term.first;
    return true;
  }
  if (auto *un = dyn_cast<UnaryExpr>(&e)) {
    if (un->getOp() != UnaryOp::Neg || !emit(un->getOperand(), prog, depth))
      return false;
    prog.insts.push_back({IndexInst::Op::Neg});
    return true;
  }
  auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin)
    return false;
  const Expr &lhs = bin->getLHS(), &rhs = bin->getRHS();
  switch (bin->getOp()) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (!emit(lhs, prog, depth) || !emit(rhs, prog, depth + 1))
      return false;
    prog.insts.push_back({bin->getOp() == BinaryOp::Add ? IndexInst::Op::Add
                                                         : IndexInst::Op::Sub});
    return true;
  case BinaryOp::Mul: {
    bool lhsConst = isConstantExpr(lhs);
    const Expr &constSide = lhsConst ? lhs : rhs;
    if (!isConstantExpr(constSide) || constSide.getType() != ValueType::Int ||
        !emit(lhsConst ? rhs : lhs, prog, depth))
      return false;
    prog.insts.push_back(
        {IndexInst::Op::MulConst, addCoefficient(compileConstant(constSide))});
    return true;
  }
  case BinaryOp::Div:
  case BinaryOp::Rem:
    if (!isConstantExpr(rhs) || rhs.getType() != ValueType::Int ||
        !emit(lhs, prog, depth))
      return false;
    prog.insts.push_back({bin->getOp() == BinaryOp::Div ? IndexInst::Op::Div
                                                         : IndexInst::Op::Rem,
                          addCoefficient(compileConstant(rhs))});
    return true;
  default:
    return false;
  }
}

llvm::Optional<IndexProgram> IndexCompiler::compileIndex(const Expr &e,
                                                         std::string &why) {
  IndexProgram prog;
  if (!emit(e, prog, 1)) {
    why = "not an affine function of the index variables";
    return llvm::None;
  }
  if (prog.maxDepth > MaxIndexDepth) {
    why = "too deeply nested";
    return llvm::None;
  }
  prog.kind = prog.insts.size() == 1 ? IndexProgram::Kind::Affine
                                     : IndexProgram::Kind::DivMod;
  if (auto *name = dyn_cast<NameExpr>(&e))
    if (const IndexVarDecl *var = name->getIndexVar())
      prog.loneVar = var->getId();
  return prog;
}
