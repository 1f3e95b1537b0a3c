//===- GemmEpilogue.cpp - A GEMM and its affine epilogue as one kernel ----===//
//
// This file implements emitEpilogueKernel: a chain a -> b1 -> ... -> bn
// whose first op is a contraction BLAS computes whole (mm, bmm) and whose
// other ops are element-wise, each an affine function `X_k + c_k * t` of
// the previous op's value t with c_k a constant (getAffineCoefficient).
// Composed, the chain is `X + alpha * Sum(..)` with alpha the product of
// the c_k and X the chain's value where the sum is 0: a prefilled GEMM
// (Contraction::prefill). The kernel stores X (the epilogue's element
// lambdas, as FusedKernel.cpp emits them, fed 0) into the last op's output
// box, then the GEMM adds alpha times the sum to it (beta = 1), so the
// sums are never stored and the output is written in one pass before the
// GEMM's (docs/CodeGen.md "Fusion").
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "MathHelpers.h"

#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/Sema.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {

/// The value of a constant expression of literals and params; None for
/// anything else.
llvm::Optional<double> constantValue(const Expr &e, ArrayRef<double> params) {
  if (const auto *lit = dyn_cast<FloatLiteralExpr>(&e))
    return lit->getValue();
  if (const auto *lit = dyn_cast<IntLiteralExpr>(&e))
    return double(lit->getValue());
  if (const auto *name = dyn_cast<NameExpr>(&e)) {
    const ParamDecl *param = name->getParam();
    if (!param || param->getPosition() >= params.size())
      return llvm::None;
    double v = params[param->getPosition()];
    return e.getType() == ValueType::Real ? v : std::trunc(v);
  }
  if (const auto *un = dyn_cast<UnaryExpr>(&e)) {
    llvm::Optional<double> v = constantValue(un->getOperand(), params);
    if (v && un->getOp() == UnaryOp::Neg)
      return -*v;
    return llvm::None;
  }
  const auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin || e.getType() != ValueType::Real)
    return llvm::None;
  llvm::Optional<double> l = constantValue(bin->getLHS(), params);
  llvm::Optional<double> r = constantValue(bin->getRHS(), params);
  if (!l || !r)
    return llvm::None;
  switch (bin->getOp()) {
  case BinaryOp::Add: return *l + *r;
  case BinaryOp::Sub: return *l - *r;
  case BinaryOp::Mul: return *l * *r;
  case BinaryOp::Div: return *l / *r;
  default: return llvm::None;
  }
}

/// `e` as X + c * t: c, or None where `e` is not such a form.
llvm::Optional<double>
affine(const Expr &e, llvm::function_ref<bool(const Expr &)> isT,
       ArrayRef<double> params) {
  if (isT(e))
    return 1.0;
  bool hasT = false;
  walkExpr(e, [&](const Expr &sub) { hasT |= isT(sub); });
  if (!hasT)
    return 0.0;
  if (const auto *un = dyn_cast<UnaryExpr>(&e)) {
    llvm::Optional<double> c = affine(un->getOperand(), isT, params);
    if (c && un->getOp() == UnaryOp::Neg)
      return -*c;
    return llvm::None;
  }
  const auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin || e.getType() != ValueType::Real)
    return llvm::None;
  const Expr &lhs = bin->getLHS(), &rhs = bin->getRHS();
  auto scale = [&](const Expr &factor) -> llvm::Optional<double> {
    return isConstantExpr(factor) ? constantValue(factor, params) : llvm::None;
  };
  switch (bin->getOp()) {
  case BinaryOp::Add:
  case BinaryOp::Sub: {
    llvm::Optional<double> l = affine(lhs, isT, params);
    llvm::Optional<double> r = affine(rhs, isT, params);
    if (!l || !r)
      return llvm::None;
    return bin->getOp() == BinaryOp::Add ? *l + *r : *l - *r;
  }
  case BinaryOp::Mul: {
    // A constant times t's affine form, either order.
    if (llvm::Optional<double> s = scale(lhs))
      if (llvm::Optional<double> c = affine(rhs, isT, params))
        return *s * *c;
    if (llvm::Optional<double> s = scale(rhs))
      if (llvm::Optional<double> c = affine(lhs, isT, params))
        return *s * *c;
    return llvm::None;
  }
  case BinaryOp::Div: {
    llvm::Optional<double> s = scale(rhs);
    llvm::Optional<double> c = affine(lhs, isT, params);
    if (!s || !c || *s == 0)
      return llvm::None;
    return *c / *s;
  }
  default:
    return llvm::None;
  }
}

/// `v` as a C++ float or double literal that reads back as `v` rounded.
std::string literal(double v, bool single) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(single ? "float(" : "double(") + buf + ")";
}

} // namespace

llvm::Optional<double>
codegen::getAffineCoefficient(const Expr &body, ArrayRef<unsigned> slots,
                              ArrayRef<double> params) {
  auto isT = [&](const Expr &e) {
    const auto *read = dyn_cast<TensorReadExpr>(&e);
    return read && read->getTensor() &&
           llvm::is_contained(slots, read->getTensor()->getPosition());
  };
  bool hasT = false;
  walkExpr(body, [&](const Expr &sub) { hasT |= isT(sub); });
  llvm::Optional<double> c = affine(body, isT, params);
  if (!hasT || !c || *c == 0 || !std::isfinite(*c))
    return llvm::None;
  return c;
}

llvm::Expected<std::string>
codegen::emitEpilogueKernel(ArrayRef<KernelInstance> chain,
                            ArrayRef<std::vector<unsigned>> slotsOfPrevious,
                            StringRef name) {
  unsigned n = chain.size();
  auto refuse = [&](const Twine &why) {
    return refuseChain(chain, "the epilogue ", why);
  };
  if (n < 2 || slotsOfPrevious.size() != n)
    return refuse("not a GEMM and one op or more");
  const Shape &shape = chain.back().outputShape;
  unsigned rank = shape.size();
  DType type = chain.front().outputType;
  if (type != DType::F32 && type != DType::F64)
    return refuse("the GEMM's output is not f32 or f64");
  KernelOptions blas;
  KernelBuilder gemm(chain.front(), blas);
  std::string unused;
  if (!gemm.lowerBody(unused))
    return gemm.takeError();
  if (!gemm.contraction || gemm.getKind() != KernelKind::Gemm ||
      !gemm.contraction->wholeBody || gemm.contraction->widened)
    return refuse("the first op is not a contraction BLAS computes whole");

  KernelOptions loops;
  loops.useBlas = false;
  std::vector<std::unique_ptr<KernelBuilder>> builders;
  std::vector<std::string> values(n);
  double alpha = 1;
  for (unsigned k = 1; k != n; ++k) {
    const KernelInstance &inst = chain[k], &previous = chain[k - 1];
    if (inst.outputShape != shape || inst.outputType != type)
      return refuse("the outputs' shapes or element types differ");
    for (unsigned p : slotsOfPrevious[k])
      if (p >= inst.inputShapes.size() ||
          inst.inputShapes[p] != previous.outputShape ||
          inst.inputTypes[p] != previous.outputType)
        return refuse("input " + Twine(p) + " of op " + Twine(k) +
                      " is not the op before's output");
    llvm::Optional<double> c = getAffineCoefficient(
        inst.op->getBody(), slotsOfPrevious[k], inst.params);
    if (!c)
      return refuse("op " + Twine(k) +
                    " is not X + c * (the op before's value), c constant");
    alpha *= *c;
    builders.push_back(std::make_unique<KernelBuilder>(inst, loops));
    KernelBuilder &kb = *builders.back();
    kb.inlinedInputs.assign(inst.inputShapes.size(), "");
    for (unsigned p : slotsOfPrevious[k])
      kb.inlinedInputs[p] = "tofu_t";
    if (!kb.lowerBody(values[k]))
      return kb.takeError();
    llvm::Optional<std::vector<unsigned>> dense =
        kb.getDenseRunInputs(1, /*scalars=*/true);
    if (!dense || kb.getVarExtents().size() != rank)
      return refuse("op " + Twine(k) + " is not element-wise");
    for (unsigned p : slotsOfPrevious[k])
      if (!llvm::is_contained(*dense, p))
        return refuse("op " + Twine(k) +
                      " reads the op before's output not at its own index");
  }
  if (!std::isfinite(alpha) || alpha == 0)
    return refuse("the composed alpha is not a finite nonzero number");

  std::vector<std::string> lines;
  std::string described = gemm.describe();
  for (const std::unique_ptr<KernelBuilder> &kb : builders)
    described += " -> " + kb->describe();
  lines.push_back("// fused GEMM epilogue: " + described);
  std::size_t signature = emitFusedSignature(name, rank, lines);
  // The epilogue ops' calls; the GEMM's is over its own box, below.
  emitChainCalls(chain, 1, lines);
  // X: the epilogue at every element of the box with the sum taken as 0,
  // each op's value converted to its element type as its kernel stores it.
  const char *elem = getElementTypeName(type);
  for (unsigned k = 1; k != n; ++k) {
    KernelBuilder &kb = *builders[k - 1];
    std::string last = k + 1 == n ? kb.storeStatement(values[k])
                                  : "return " + kb.storedValue(values[k]) + ";";
    emitElementLambda(kb, "element" + std::to_string(k),
                      "call" + std::to_string(k),
                      "const " + std::string(elem) + " tofu_t", last, lines);
  }
  std::string vars;
  for (unsigned d = 0; d != rank; ++d) {
    std::string v = "v" + std::to_string(d), ds = std::to_string(d);
    lines.push_back("for (std::int64_t " + v + " = lo[" + ds + "]; " + v +
                    " < hi[" + ds + "]; ++" + v + ") {");
    vars += v + ", ";
  }
  std::string value = std::string(elem) + "(0)";
  for (unsigned k = 1; k != n; ++k)
    value = "element" + std::to_string(k) + "(" + vars + value + ")";
  lines.push_back(value + ";");
  for (unsigned d = 0; d != rank; ++d)
    lines.push_back("}");
  // The GEMM over the same box, its sum over the whole reduction range
  // (the op is not partial), added to X with the composed alpha.
  std::string glo, ghi;
  for (unsigned d = 0; d != rank; ++d) {
    glo += "lo[" + std::to_string(d) + "], ";
    ghi += "hi[" + std::to_string(d) + "], ";
  }
  ArrayRef<int64_t> extents = gemm.getVarExtents();
  for (unsigned id = rank; id != extents.size(); ++id) {
    glo += "0, ";
    ghi += std::to_string(extents[id]) + ", ";
  }
  lines.push_back("{");
  lines.push_back("const std::int64_t gemmLo[] = {" + glo + "}, gemmHi[] = {" +
                  ghi + "};");
  lines.push_back("const tofu::runtime::KernelCall call{fused.inputs, " +
                  std::to_string(chain.front().inputShapes.size()) +
                  ", fused.output, gemmLo, gemmHi};");
  std::vector<std::string> declared;
  gemm.declareBoxes(declared);
  for (std::string &line : declared)
    if (!StringRef(line).startswith("if (lo["))
      lines.push_back(std::move(line));
  Contraction prefilled = *gemm.contraction;
  prefilled.epilogueAlpha = literal(alpha, type == DType::F32);
  gemm.emitContraction(prefilled, lines);
  lines.push_back("}");
  return finishFusedKernel(lines, signature);
}
