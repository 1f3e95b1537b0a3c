//===- Contraction.cpp - Route contractions to BLAS -----------------------===//
//
// This file implements the BLAS routing of KernelBuilder: a reduction
// `Sum(lambda k: A[b.., i, k] * B[b.., k, j])` (either operand order, either
// operand stored transposed) whose output variables end with `i, j`, whose
// leading output variables `b..` index both operands, whose reads are plain
// variables that stay inside their tensors, and whose tensors and output
// all have one floating-point type, is computed by cblas_sgemm (f32) or
// cblas_dgemm (f64), one call per batch element of the box, into the output
// box. A body `X + alpha * Sum(..)` (addmm's `beta * self[j] + alpha *
// Sum(..)`, alpha constant, X without a reduction) is prefilled: the loop
// nest stores X into the output box first and the GEMM adds alpha times
// the sum to it (beta = 1), PyTorch's addmm call, with no pass reading the
// sums back. Any other body that is more than the sum then reads the sum
// back from the output element it overwrites. The same prefilled body with
// X = `scale * T[..]` (T read at output variables or broadcast) is
// described for the device executor (DeviceGemm::bias): a fill of the box
// by cuBLAS, then the GEMM with beta = 1.
//
// On the CPU target a contraction over f16/bf16 tensors (a mixed-precision
// step) is widened: its operand boxes are copied into double buffers
// (each 16-bit value exactly), cblas_dgemm sums the products in double into
// a dense buffer over the output box, `gsum`, and each element is rounded
// to the output's dtype once where it is stored, after the rest of the body
// (addmm's bias) is added in double. That is the loop nest's arithmetic
// (double products and sums, one rounding), only summed in BLAS's order.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/Sema.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {

/// The index variable ids of a read whose indices are all distinct plain
/// variables; empty if it is not such a read.
SmallVector<unsigned, 4> plainVars(const TensorReadExpr &read) {
  SmallVector<unsigned, 4> vars;
  for (unsigned d = 0, n = read.getNumIndices(); d != n; ++d) {
    const auto *name = dyn_cast<NameExpr>(&read.getIndex(d));
    if (!name || !name->getIndexVar())
      return {};
    unsigned id = name->getIndexVar()->getId();
    if (llvm::is_contained(vars, id))
      return {};
    vars.push_back(id);
  }
  return vars;
}

/// Calls `fn` on each reduction of `e` that is not inside another reduction
/// or a select.
void forEachOuterReduce(const Expr &e,
                        llvm::function_ref<void(const ReduceExpr &)> fn) {
  switch (e.getKind()) {
  case Expr::Kind::Reduce:
    return fn(cast<ReduceExpr>(e));
  case Expr::Kind::Unary:
    return forEachOuterReduce(cast<UnaryExpr>(e).getOperand(), fn);
  case Expr::Kind::Binary:
    forEachOuterReduce(cast<BinaryExpr>(e).getLHS(), fn);
    return forEachOuterReduce(cast<BinaryExpr>(e).getRHS(), fn);
  case Expr::Kind::Call: {
    const auto &call = cast<CallExpr>(e);
    if (call.getBuiltin() && *call.getBuiltin() == Builtin::Select)
      return;
    for (const ExprPtr &arg : call.getArgs())
      forEachOuterReduce(*arg, fn);
    return;
  }
  default:
    return;
  }
}

} // namespace

llvm::Optional<Contraction> KernelBuilder::matchContraction(bool widen16) {
  unsigned rank = op.getOutputRank();
  DType type = inst.outputType;
  auto is16 = [](DType t) { return t == DType::F16 || t == DType::BF16; };
  auto isFloat = [&](DType t) {
    return t == DType::F32 || t == DType::F64 || is16(t);
  };
  if (rank < 2 || !isFloat(type) || (is16(type) && !widen16))
    return llvm::None;
  llvm::Optional<Contraction> found;
  forEachOuterReduce(op.getBody(), [&](const ReduceExpr &reduce) {
    if (found || reduce.getReducer() != Reducer::Sum ||
        reduce.getVars().size() != 1)
      return;
    const auto *mul = dyn_cast<BinaryExpr>(&reduce.getBody());
    if (!mul || mul->getOp() != BinaryOp::Mul)
      return;
    const auto *x = dyn_cast<TensorReadExpr>(&mul->getLHS());
    const auto *y = dyn_cast<TensorReadExpr>(&mul->getRHS());
    if (!x || !y || !x->getTensor() || !y->getTensor())
      return;
    unsigned iv = rank - 2, jv = rank - 1;
    unsigned k = reduce.getVars()[0]->getId();
    SmallVector<unsigned, 4> xv = plainVars(*x), yv = plainVars(*y);
    if (llvm::is_contained(xv, jv))
      std::swap(x, y), std::swap(xv, yv);
    // A holds (batch.., i, k), B holds (batch.., k, j), in their last two
    // dimensions either way round.
    if (xv.size() != rank || yv.size() != rank ||
        !llvm::is_contained(xv, iv) || llvm::is_contained(xv, jv) ||
        !llvm::is_contained(yv, jv) || llvm::is_contained(yv, iv) ||
        !llvm::is_contained(xv, k) || !llvm::is_contained(yv, k))
      return;
    for (unsigned b = 0; b + 2 < rank; ++b)
      if (!llvm::is_contained(xv, b) || !llvm::is_contained(yv, b))
        return;
    auto lastTwo = [&](ArrayRef<unsigned> vars, unsigned v) {
      return (vars[rank - 2] == v && vars[rank - 1] == k) ||
             (vars[rank - 2] == k && vars[rank - 1] == v);
    };
    if (!lastTwo(xv, iv) || !lastTwo(yv, jv))
      return;
    // Every read stays inside its tensor, and both have the output's type,
    // or (widened) each of the three is a floating-point type and one of
    // them has 16 bits.
    DType ta = inst.inputTypes[x->getTensor()->getPosition()];
    DType tb = inst.inputTypes[y->getTensor()->getPosition()];
    bool widened = widen16 && isFloat(ta) && isFloat(tb) &&
                   (is16(type) || is16(ta) || is16(tb));
    for (const auto &[read, vars] : {std::make_pair(x, &xv), std::make_pair(y, &yv)}) {
      unsigned t = read->getTensor()->getPosition();
      if (inst.inputTypes[t] != type && !widened)
        return;
      for (unsigned d = 0; d != rank; ++d)
        if (varExtents[(*vars)[d]] > inst.inputShapes[t][d])
          return;
    }
    Contraction c;
    c.reduce = &reduce;
    c.a = x;
    c.b = y;
    c.kVar = k;
    c.transA = xv[rank - 1] == iv;
    c.transB = yv[rank - 1] == k;
    c.wholeBody = &op.getBody() == &reduce;
    c.widened = widened;
    found = c;
  });
  return found;
}

namespace {

/// True if `e` has a reduction.
bool hasReduce(const Expr &e) {
  bool found = false;
  walkExpr(e, [&](const Expr &sub) { found |= isa<ReduceExpr>(sub); });
  return found;
}

} // namespace

bool KernelBuilder::matchPrefill(Contraction &c) const {
  const auto *add = dyn_cast<BinaryExpr>(&op.getBody());
  if (!add || add->getOp() != BinaryOp::Add || c.widened || c.wholeBody)
    return false;
  // `sum` is Sum, alpha * Sum or Sum * alpha; `rest` is X.
  auto scaled = [&](const Expr &e) -> llvm::Optional<const Expr *> {
    if (&e == c.reduce)
      return static_cast<const Expr *>(nullptr);
    const auto *mul = dyn_cast<BinaryExpr>(&e);
    if (!mul || mul->getOp() != BinaryOp::Mul)
      return llvm::None;
    if (&mul->getRHS() == c.reduce && tdl::isConstantExpr(mul->getLHS()))
      return &mul->getLHS();
    if (&mul->getLHS() == c.reduce && tdl::isConstantExpr(mul->getRHS()))
      return &mul->getRHS();
    return llvm::None;
  };
  for (bool sumFirst : {false, true}) {
    const Expr &sum = sumFirst ? add->getLHS() : add->getRHS();
    const Expr &rest = sumFirst ? add->getRHS() : add->getLHS();
    if (llvm::Optional<const Expr *> alpha = scaled(sum))
      if (!hasReduce(rest)) {
        c.prefill = &rest;
        c.alpha = *alpha;
        return true;
      }
  }
  return false;
}

namespace {

using FoldInt = llvm::function_ref<llvm::Optional<int64_t>(const Expr &)>;

/// The value of the constant real expression `e` (a literal, a param, an
/// integer `foldInt` folds, a negation of one); None otherwise.
llvm::Optional<double> realConstant(const Expr &e, const KernelInstance &inst,
                                    FoldInt foldInt) {
  if (llvm::Optional<int64_t> v = foldInt(e))
    return double(*v);
  if (const auto *lit = dyn_cast<FloatLiteralExpr>(&e))
    return lit->getValue();
  if (const auto *name = dyn_cast<NameExpr>(&e))
    if (const ParamDecl *param = name->getParam()) {
      double v = inst.params[param->getPosition()];
      return e.getType() == ValueType::Real ? v : std::trunc(v);
    }
  if (const auto *un = dyn_cast<UnaryExpr>(&e))
    if (un->getOp() == UnaryOp::Neg)
      if (llvm::Optional<double> v = realConstant(un->getOperand(), inst, foldInt))
        return -*v;
  return llvm::None;
}

/// The GemmBias of a prefilled contraction's X in an op with `rank`
/// output variables and variable extents `varExtents`; None where X is
/// not `scale * T[..]` with T's reads the device's.
llvm::Optional<runtime::GemmBias> describeBias(const Expr &x, unsigned rank,
                                               const KernelInstance &inst,
                                               ArrayRef<int64_t> varExtents,
                                               FoldInt foldInt) {
  // `scale * T[..]`, `T[..] * scale` or `T[..]`.
  const auto *read = dyn_cast<TensorReadExpr>(&x);
  llvm::Optional<double> scale = 1.0;
  if (const auto *mul = dyn_cast<BinaryExpr>(&x);
      mul && mul->getOp() == BinaryOp::Mul) {
    bool readFirst = isa<TensorReadExpr>(mul->getLHS());
    read = dyn_cast<TensorReadExpr>(readFirst ? &mul->getLHS() : &mul->getRHS());
    scale = realConstant(readFirst ? mul->getRHS() : mul->getLHS(), inst, foldInt);
  }
  if (!read || !read->getTensor() || !scale)
    return llvm::None;
  unsigned t = read->getTensor()->getPosition();
  const Shape &shape = inst.inputShapes[t];
  if (inst.inputTypes[t] != inst.outputType || shape.size() != read->getNumIndices())
    return llvm::None;
  runtime::GemmBias bias;
  bias.input = t;
  bias.scale = *scale;
  // Each index is an output variable v (or `v % n` with n at least v's
  // extent) or 0 (or `v % 1`).
  for (unsigned d = 0; d != shape.size(); ++d) {
    const Expr *index = &read->getIndex(d);
    llvm::Optional<int64_t> modulus;
    if (const auto *rem = dyn_cast<BinaryExpr>(index);
        rem && rem->getOp() == BinaryOp::Rem) {
      modulus = foldInt(rem->getRHS());
      if (!modulus)
        return llvm::None;
      index = &rem->getLHS();
    }
    int var = -1;
    if (const auto *name = dyn_cast<NameExpr>(index); name && name->getIndexVar())
      var = int(name->getIndexVar()->getId());
    else if (foldInt(*index) != llvm::Optional<int64_t>(0))
      return llvm::None;
    if (var >= int(rank))
      return llvm::None;
    if (var >= 0 && modulus && *modulus == 1)
      var = -1;
    else if (var >= 0 && modulus && *modulus < varExtents[var])
      return llvm::None;
    if (var >= 0 && (varExtents[var] > shape[d] ||
                     llvm::is_contained(bias.vars, var)))
      return llvm::None;
    if (var < 0 && shape[d] < 1)
      return llvm::None;
    bias.vars.push_back(var);
  }
  // One cuBLAS call fills a batch element (CudaDevice.cpp): T's rows are
  // read along j (a full bias or a broadcast row), or a column along i.
  int iv = int(rank) - 2, jv = int(rank) - 1;
  bool rows = !bias.vars.empty() && bias.vars.back() == jv;
  bool column = !llvm::is_contained(bias.vars, jv) &&
                llvm::is_contained(bias.vars, iv);
  if (!rows && !column)
    return llvm::None;
  return bias;
}

} // namespace

llvm::Optional<runtime::DeviceGemm>
KernelBuilder::describeGemm(const Contraction &c) const {
  if (c.widened || (!c.wholeBody && !c.prefill))
    return llvm::None;
  runtime::DeviceGemm g;
  g.a = c.a->getTensor()->getPosition();
  g.b = c.b->getTensor()->getPosition();
  g.transA = c.transA;
  g.transB = c.transB;
  g.kVar = c.kVar;
  g.kExtent = varExtents[c.kVar];
  for (unsigned v : plainVars(*c.a))
    g.aVars.push_back(v);
  for (unsigned v : plainVars(*c.b))
    g.bVars.push_back(v);
  if (!c.prefill)
    return g;
  // A prefilled body `scale * T[..] + alpha * Sum(..)`: its fill, where
  // both constants have values and T's reads are the device's (GemmBias).
  auto fold = [this](const Expr &e) { return foldInt(e); };
  llvm::Optional<double> alpha =
      c.alpha ? realConstant(*c.alpha, inst, fold) : 1.0;
  llvm::Optional<runtime::GemmBias> bias = describeBias(
      *c.prefill, op.getOutputRank(), inst, varExtents, fold);
  if (!alpha || !bias)
    return llvm::None;
  g.alpha = *alpha;
  g.bias = std::move(*bias);
  return g;
}

std::string KernelBuilder::gemmStart(const Contraction &c, unsigned id) const {
  unsigned rank = op.getOutputRank();
  if (id == c.kVar)
    return varName(c.kVar) + "lo";
  if (id == rank - 2 || id == rank - 1)
    return "lo[" + std::to_string(id) + "]";
  return varName(id);
}

void KernelBuilder::openGemmBox(const Contraction &c, StringRef declare,
                                std::vector<std::string> &out) {
  unsigned rank = op.getOutputRank();
  std::string k = varName(c.kVar);
  std::string ivs = std::to_string(rank - 2), jvs = std::to_string(rank - 1);
  out.push_back("const std::int64_t gm = hi[" + ivs + "] - lo[" + ivs +
                "], gn = hi[" + jvs + "] - lo[" + jvs + "], gk = " + k +
                "hi - " + k + "lo;");
  if (!declare.empty())
    out.push_back(declare.str());
  out.push_back("if (gm > 0 && gn > 0) {");
  for (unsigned b = 0; b + 2 < rank; ++b) {
    std::string v = varName(b), bs = std::to_string(b);
    out.push_back("for (std::int64_t " + v + " = lo[" + bs + "]; " + v +
                  " < hi[" + bs + "]; ++" + v + ") {");
  }
}

void KernelBuilder::emitContraction(const Contraction &c,
                                    std::vector<std::string> &out) {
  if (c.widened)
    return emitWidenedContraction(c, out);
  unsigned rank = op.getOutputRank();
  bool single = inst.outputType == DType::F32;
  const char *elem = single ? "float" : "double";
  out.push_back("// " + std::string(single ? "cblas_sgemm" : "cblas_dgemm") +
                ": the sum over '" + op.getIndexVars()[c.kVar]->getName().str() +
                "' for every output element of the box");
  openGemmBox(c, {}, out);
  auto at = [&](unsigned id) { return gemmStart(c, id); };
  auto operand = [&](const TensorReadExpr *read, StringRef ptr) {
    unsigned t = read->getTensor()->getPosition();
    SmallVector<std::string, 4> index;
    for (unsigned id : plainVars(*read))
      index.push_back(at(id));
    out.push_back(("const " + Twine(elem) + " *" + ptr + " = in" + Twine(t) +
                   " + " + inputOffset(t, index) + ";")
                      .str());
    return "int(in" + std::to_string(t) + "s" + std::to_string(rank - 2) + ")";
  };
  std::string lda = operand(c.a, "ga"), ldb = operand(c.b, "gb");
  SmallVector<std::string, 4> index;
  for (unsigned d = 0; d != rank; ++d)
    index.push_back(at(d));
  out.push_back(std::string(elem) + " *gc = out + " + outputOffset(index) + ";");
  std::string ldc = "outs" + std::to_string(rank - 2);
  // A prefilled box (Contraction::prefill) holds X: the GEMM adds alpha
  // times the sum to it, and an empty sum leaves it.
  std::string alpha =
      c.alpha ? std::string(elem) + "(" + lowerValue(*c.alpha) + ")" : "1";
  bool prefilled = c.prefill || !c.epilogueAlpha.empty();
  if (!c.epilogueAlpha.empty())
    alpha = c.epilogueAlpha;
  if (prefilled) {
    out.push_back("if (gk > 0) {");
  } else {
    out.push_back("if (gk <= 0) {");
    out.push_back("for (std::int64_t r = 0; r < gm; ++r) {");
    out.push_back("std::fill(gc + r * " + ldc + ", gc + r * " + ldc +
                  " + gn, " + elem + "(0));");
    out.push_back("}");
    out.push_back("} else {");
  }
  out.push_back(std::string("tofu_kg::cblas_") + (single ? "s" : "d") +
                "gemm(tofu_kg::RowMajor, " +
                (c.transA ? "tofu_kg::Trans" : "tofu_kg::NoTrans") + ", " +
                (c.transB ? "tofu_kg::Trans" : "tofu_kg::NoTrans") +
                ", int(gm), int(gn), int(gk), " + alpha + ", ga, " + lda +
                ", gb, " + ldb + ", " + (prefilled ? "1" : "0") + ", gc, int(" +
                ldc + "));");
  out.push_back("}");
  for (unsigned b = 0; b + 2 < rank; ++b)
    out.push_back("}");
  out.push_back("}");
}

std::string KernelBuilder::boxOffset(ArrayRef<std::string> index) const {
  // Row-major over the box: ((v0 - lo0) * n1 + (v1 - lo1)) * n2 + ...
  std::string s;
  for (unsigned d = 0, rank = index.size(); d != rank; ++d) {
    std::string ds = std::to_string(d);
    std::string at = "(" + index[d] + " - lo[" + ds + "])";
    s = d == 0 ? at
               : "(" + s + ") * (hi[" + ds + "] - lo[" + ds + "]) + " + at;
  }
  return s.empty() ? "0" : s;
}

namespace {

/// A C++ expression giving the double value of the stored element `e` of
/// type `t` (exact for every floating-point type).
std::string widen(DType t, const std::string &e) {
  switch (t) {
  case DType::BF16: return "tofu_kg::fromBF16(" + e + ")";
  case DType::F16: return "tofu_kg::fromF16(" + e + ")";
  default: return "double(" + e + ")";
  }
}

/// The double `v` rounded to the floating-point type `t`, as storeStatement
/// rounds it.
std::string narrow(DType t, const std::string &v) {
  switch (t) {
  case DType::BF16: return "tofu_kg::toBF16(" + v + ")";
  case DType::F16: return "tofu_kg::toF16(" + v + ")";
  case DType::F32: return "float(" + v + ")";
  default: return v;
  }
}

} // namespace

void KernelBuilder::emitWidenedContraction(const Contraction &c,
                                           std::vector<std::string> &out) {
  unsigned rank = op.getOutputRank();
  out.push_back("// cblas_dgemm on double copies of the operands (16-bit "
                "tensors): the sum over '" +
                op.getIndexVars()[c.kVar]->getName().str() +
                "' for every output element of the box, into gsum");
  std::string boxSize = "std::size_t(1)";
  for (unsigned d = 0; d != rank; ++d)
    boxSize += " * std::size_t(hi[" + std::to_string(d) + "] - lo[" +
               std::to_string(d) + "])";
  openGemmBox(c, "std::vector<double> gsum(" + boxSize + ", 0.0), gwa, gwb;",
              out);
  auto at = [&](unsigned id) { return gemmStart(c, id); };
  // Copies the operand's rows x cols block (its stored layout) into `buf`,
  // widened; returns the block's leading dimension.
  auto operand = [&](const TensorReadExpr *read, const std::string &rows,
                     const std::string &cols, StringRef ptr, StringRef buf) {
    unsigned t = read->getTensor()->getPosition();
    SmallVector<std::string, 4> index;
    for (unsigned id : plainVars(*read))
      index.push_back(at(id));
    std::string ts = std::to_string(t);
    out.push_back(("const " + Twine(getElementTypeName(inst.inputTypes[t])) +
                   " *" + ptr + " = in" + ts + " + " + inputOffset(t, index) +
                   ";")
                      .str());
    out.push_back((buf + ".resize(std::size_t(" + rows + " * " + cols + "));").str());
    out.push_back("for (std::int64_t r = 0; r < " + rows + "; ++r)");
    out.push_back("for (std::int64_t q = 0; q < " + cols + "; ++q)");
    out.push_back((buf + "[r * " + cols + " + q] = " +
                   widen(inst.inputTypes[t],
                         (ptr + "[r * in" + ts + "s" + Twine(rank - 2) + " + q]").str()) +
                   ";")
                      .str());
    return "int(" + cols + ")";
  };
  SmallVector<std::string, 4> index;
  for (unsigned d = 0; d != rank; ++d)
    index.push_back(at(d));
  out.push_back("double *gc = gsum.data() + " + boxOffset(index) + ";");
  out.push_back("if (gk > 0) {");
  // Stored [rows][cols]: A is (i, k) or, transposed, (k, i); B is (k, j)
  // or, transposed, (j, k).
  std::string lda = c.transA ? operand(c.a, "gk", "gm", "ga", "gwa")
                             : operand(c.a, "gm", "gk", "ga", "gwa");
  std::string ldb = c.transB ? operand(c.b, "gn", "gk", "gb", "gwb")
                             : operand(c.b, "gk", "gn", "gb", "gwb");
  out.push_back(std::string("tofu_kg::cblas_dgemm(tofu_kg::RowMajor, ") +
                (c.transA ? "tofu_kg::Trans" : "tofu_kg::NoTrans") + ", " +
                (c.transB ? "tofu_kg::Trans" : "tofu_kg::NoTrans") +
                ", int(gm), int(gn), int(gk), 1, gwa.data(), " + lda +
                ", gwb.data(), " + ldb + ", 0, gc, int(gn));");
  out.push_back("}");
  if (c.wholeBody) {
    // Each sum rounded once into the output.
    std::string ldc = "outs" + std::to_string(rank - 2);
    out.push_back("auto *go = out + " + outputOffset(index) + ";");
    out.push_back("for (std::int64_t r = 0; r < gm; ++r)");
    out.push_back("for (std::int64_t q = 0; q < gn; ++q)");
    out.push_back("go[r * " + ldc + " + q] = " +
                  narrow(inst.outputType, "gc[r * gn + q]") + ";");
  }
  for (unsigned b = 0; b + 2 < rank; ++b)
    out.push_back("}");
  out.push_back("}");
}
