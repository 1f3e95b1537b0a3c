//===- Convolution.cpp - Convolutions through im2col and GEMM -------------===//
//
// This file implements the im2col routing of KernelBuilder: a body
// `Sum(lambda ci, ky, kx: X[n, ci, IY, IX] * W[co, ci, ky, kx])` over the
// output `(n, co, y, x)`, where IY is integer arithmetic on y, ky and
// params only and IX on x, kx and params only (any stride, dilation and
// padding), and X, W and the output share a floating-point type, is
// computed per batch element of the box as one GEMM: the weight box packed
// as a [co x (ci ky kx)] matrix, the input gathered (zero where padded) as a
// [(ci ky kx) x (y x)] matrix, the product scattered into the output box.
// The same covers a convolution's input gradient (the weight read
// [ci, co, ky, kx]; with a stride, the `select` keeping the (ky, kx) that
// divide becomes zeros in the gathered matrix). A weight gradient
// `Sum(lambda n, oy, ox: G[n, co, oy, ox] * X[n, ci, IY, IX])` over the
// output (co, ci, ky, kx) is one GEMM per batch element accumulating
// G[co x (oy ox)] times the gathered X transposed.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/IntArith.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {

/// The index variables `e` uses.
SmallVector<unsigned, 4> usedVars(const Expr &e) {
  SmallVector<unsigned, 4> vars;
  walkExpr(e, [&](const Expr &sub) {
    if (const auto *name = dyn_cast<NameExpr>(&sub))
      if (const IndexVarDecl *var = name->getIndexVar())
        if (!llvm::is_contained(vars, var->getId()))
          vars.push_back(var->getId());
  });
  return vars;
}

/// The GEMM of the element type.
std::string gemmName(bool single) {
  return single ? "cblas_sgemm" : "cblas_dgemm";
}

/// Opens `for (v = lo; v < hi; ++v) {`.
void emitLoop(std::vector<std::string> &out, const std::string &v,
              const std::string &lo, const std::string &hi) {
  out.push_back("for (std::int64_t " + v + " = " + lo + "; " + v + " < " + hi +
                "; ++" + v + ") {");
}

bool isVar(const Expr &e, unsigned id) {
  const auto *name = dyn_cast<NameExpr>(&e);
  return name && name->getIndexVar() && name->getIndexVar()->getId() == id;
}

} // namespace

namespace {
/// True if `e` reads no tensor, reduces nothing and uses only `vars`.
bool isIndexCondition(const Expr &e, ArrayRef<unsigned> vars) {
  bool ok = true;
  walkExpr(e, [&](const Expr &sub) {
    if (isa<TensorReadExpr>(&sub) || isa<ReduceExpr>(&sub))
      ok = false;
    for (unsigned v : usedVars(sub))
      ok &= llvm::is_contained(vars, v);
  });
  return ok;
}

/// The product `L * R` that `body` is, or that `select(cond, L * R, 0.0)`
/// keeps (setting `cond`); null otherwise.
const BinaryExpr *matchProduct(const Expr &body, const Expr *&cond) {
  cond = nullptr;
  const Expr *product = &body;
  if (const auto *call = dyn_cast<CallExpr>(&body)) {
    const auto *zero = call->getNumArgs() == 3
                           ? dyn_cast<FloatLiteralExpr>(&call->getArg(2))
                           : nullptr;
    if (call->getBuiltin() != tdl::Builtin::Select || !zero ||
        zero->getValue() != 0.0)
      return nullptr;
    cond = &call->getArg(0);
    product = &call->getArg(1);
  }
  const auto *mul = dyn_cast<BinaryExpr>(product);
  return mul && mul->getOp() == BinaryOp::Mul ? mul : nullptr;
}
} // namespace

/// True if `x` reads [n, c, IY, IX] with IY integer arithmetic on `outer`
/// (the output row), `inner` (the kernel row) and params only, IX likewise
/// on the columns, n and c plain variables inside the tensor.
static bool isGatheredRead(const KernelBuilder &b, const TensorReadExpr &x,
                           unsigned n, unsigned c, unsigned y, unsigned ky,
                           unsigned xv, unsigned kx) {
  unsigned xt = x.getTensor()->getPosition();
  if (x.getNumIndices() != 4 || !isVar(x.getIndex(0), n) ||
      !isVar(x.getIndex(1), c) ||
      b.varExtents[n] > b.inst.inputShapes[xt][0] ||
      b.varExtents[c] > b.inst.inputShapes[xt][1])
    return false;
  for (auto [d, outer, inner] :
       {std::make_tuple(2u, y, ky), std::make_tuple(3u, xv, kx)}) {
    const Expr &index = x.getIndex(d);
    if (!b.isPureInt(index))
      return false;
    for (unsigned v : usedVars(index))
      if (v != outer && v != inner)
        return false;
  }
  return true;
}

llvm::Optional<Contraction> KernelBuilder::matchConvolution() {
  DType type = inst.outputType;
  if (op.getOutputRank() != 4 || (type != DType::F32 && type != DType::F64))
    return llvm::None;
  const auto *reduce = dyn_cast<ReduceExpr>(&op.getBody());
  if (!reduce || reduce->getReducer() != Reducer::Sum ||
      reduce->getVars().size() != 3)
    return llvm::None;
  const Expr *cond = nullptr;
  const BinaryExpr *mul = matchProduct(reduce->getBody(), cond);
  if (!mul)
    return llvm::None;
  const auto *lhs = dyn_cast<TensorReadExpr>(&mul->getLHS());
  const auto *rhs = dyn_cast<TensorReadExpr>(&mul->getRHS());
  if (!lhs || !rhs || !lhs->getTensor() || !rhs->getTensor() ||
      lhs->getNumIndices() != 4 || rhs->getNumIndices() != 4)
    return llvm::None;
  for (const TensorReadExpr *read : {lhs, rhs})
    if (inst.inputTypes[read->getTensor()->getPosition()] != type)
      return llvm::None;
  unsigned r0 = reduce->getVars()[0]->getId(), r1 = reduce->getVars()[1]->getId(),
           r2 = reduce->getVars()[2]->getId();
  // A read of plain variables `want`, inside its tensor.
  auto isPlain = [&](const TensorReadExpr &read, ArrayRef<unsigned> want) {
    unsigned t = read.getTensor()->getPosition();
    for (unsigned d = 0; d != 4; ++d)
      if (!isVar(read.getIndex(d), want[d]) ||
          varExtents[want[d]] > inst.inputShapes[t][d])
        return false;
    return true;
  };
  Contraction c;
  c.reduce = reduce;
  c.wholeBody = true;
  c.im2col = true;
  // Forward or input gradient: output (n, co, y, x), reduction (ci, ky, kx),
  // W[co, ci, ky, kx] or W[ci, co, ky, kx] times X[n, ci, IY, IX].
  if (!cond || isIndexCondition(*cond, {2, 3, r1, r2})) {
    for (auto [w, x] : {std::make_pair(lhs, rhs), std::make_pair(rhs, lhs)}) {
      if (!isGatheredRead(*this, *x, 0, r0, 2, r1, 3, r2))
        continue;
      for (bool swapped : {false, true}) {
        unsigned co = swapped ? r0 : 1, ci = swapped ? 1 : r0;
        if (!isPlain(*w, {co, ci, r1, r2}))
          continue;
        c.a = w;
        c.b = x;
        c.weightSwapped = swapped;
        c.cond = cond;
        return c;
      }
    }
  }
  // Weight gradient: output (co, ci, ky, kx), reduction (n, oy, ox),
  // G[n, co, oy, ox] times X[n, ci, IY(oy, ky), IX(ox, kx)].
  if (cond)
    return llvm::None;
  for (auto [g, x] : {std::make_pair(lhs, rhs), std::make_pair(rhs, lhs)})
    if (isPlain(*g, {r0, 0, r1, r2}) &&
        isGatheredRead(*this, *x, r0, 1, r1, 2, r2, 3)) {
      c.a = g;
      c.b = x;
      c.weightGradient = true;
      return c;
    }
  return llvm::None;
}

void KernelBuilder::emitConvolution(const Contraction &c,
                                    std::vector<std::string> &out) {
  if (c.weightGradient)
    return emitWeightGradient(c, out);
  bool single = inst.outputType == DType::F32;
  std::string elem = single ? "float" : "double";
  unsigned ci = c.reduce->getVars()[0]->getId(),
           ky = c.reduce->getVars()[1]->getId(),
           kx = c.reduce->getVars()[2]->getId();
  std::string n = varName(0), co = varName(1), y = varName(2), x = varName(3);
  std::string vci = varName(ci), vky = varName(ky), vkx = varName(kx);
  unsigned wt = c.a->getTensor()->getPosition();
  auto loop = [&](const std::string &v, const std::string &lo,
                  const std::string &hi) { emitLoop(out, v, lo, hi); };
  out.push_back("// im2col and " + gemmName(single) +
                ": the convolution of each batch element of the box");
  out.push_back("const std::int64_t gm = hi[1] - lo[1], gny = hi[2] - lo[2], "
                "gnx = hi[3] - lo[3], gn = gny * gnx;");
  out.push_back("const std::int64_t gci = " + vci + "hi - " + vci + "lo, gky = " +
                vky + "hi - " + vky + "lo, gkx = " + vkx + "hi - " + vkx +
                "lo;");
  out.push_back("const std::int64_t gk = gci > 0 && gky > 0 && gkx > 0 ? gci * "
                "gky * gkx : 0;");
  out.push_back("if (gm > 0 && gn > 0) {");
  out.push_back("std::vector<" + elem + "> gw(gm * gk), gcol(gk * gn), gres(gm * gn);");
  // The weight box as a [co x (ci ky kx)] matrix.
  out.push_back("std::int64_t gr = 0;");
  loop(co, "lo[1]", "hi[1]");
  loop(vci, vci + "lo", vci + "hi");
  loop(vky, vky + "lo", vky + "hi");
  loop(vkx, vkx + "lo", vkx + "hi");
  out.push_back("gw[gr++] = in" + std::to_string(wt) + "[" +
                inputOffset(wt, c.weightSwapped
                                    ? ArrayRef<std::string>{vci, co, vky, vkx}
                                    : ArrayRef<std::string>{co, vci, vky, vkx}) +
                "];");
  out.push_back("}");
  out.push_back("}");
  out.push_back("}");
  out.push_back("}");
  loop(n, "lo[0]", "hi[0]");
  // The input as a [(ci ky kx) x (y x)] matrix, zero where padded.
  out.push_back("std::int64_t gc = 0;");
  loop(vci, vci + "lo", vci + "hi");
  loop(vky, vky + "lo", vky + "hi");
  loop(vkx, vkx + "lo", vkx + "hi");
  loop(y, "lo[2]", "hi[2]");
  loop(x, "lo[3]", "hi[3]");
  scopes.emplace_back();
  std::string value = lowerValue(*c.b);
  if (c.cond)
    value = "(" + lowerCond(*c.cond) + " ? " + value + " : 0.0)";
  for (std::string &line : scopes.back().lines)
    out.push_back(std::move(line));
  scopes.pop_back();
  out.push_back("gcol[gc++] = " + elem + "(" + value + ");");
  for (unsigned i = 0; i != 5; ++i)
    out.push_back("}");
  out.push_back("if (gk > 0) {");
  out.push_back("tofu_kg::" + gemmName(single) + "(tofu_kg::RowMajor, tofu_kg::NoTrans, tofu_kg::NoTrans, "
                "int(gm), int(gn), int(gk), 1, gw.data(), int(gk), "
                "gcol.data(), int(gn), 0, gres.data(), int(gn));");
  out.push_back("}");
  // The product into the output box.
  out.push_back("std::int64_t go = 0;");
  loop(co, "lo[1]", "hi[1]");
  loop(y, "lo[2]", "hi[2]");
  loop(x, "lo[3]", "hi[3]");
  out.push_back("out[" + outputOffset({n, co, y, x}) + "] = gres[go++];");
  for (unsigned i = 0; i != 4; ++i)
    out.push_back("}");
  out.push_back("}");
}

void KernelBuilder::emitWeightGradient(const Contraction &c,
                                       std::vector<std::string> &out) {
  bool single = inst.outputType == DType::F32;
  std::string elem = single ? "float" : "double";
  std::string vn = varName(c.reduce->getVars()[0]->getId()),
              voy = varName(c.reduce->getVars()[1]->getId()),
              vox = varName(c.reduce->getVars()[2]->getId());
  std::string co = varName(0), ci = varName(1), ky = varName(2), kx = varName(3);
  unsigned gt = c.a->getTensor()->getPosition();
  auto loop = [&](const std::string &v, const std::string &lo,
                  const std::string &hi) { emitLoop(out, v, lo, hi); };
  auto close = [&](unsigned n) {
    for (unsigned i = 0; i != n; ++i)
      out.push_back("}");
  };
  out.push_back("// im2col and " + gemmName(single) +
                ": the weight gradient, one product per batch element");
  out.push_back("const std::int64_t gm = hi[0] - lo[0], gn = (hi[1] - lo[1]) * "
                "(hi[2] - lo[2]) * (hi[3] - lo[3]);");
  out.push_back("const std::int64_t gk = " + voy + "hi > " + voy + "lo && " +
                vox + "hi > " + vox + "lo ? (" + voy + "hi - " + voy + "lo) * (" +
                vox + "hi - " + vox + "lo) : 0;");
  out.push_back("std::vector<" + elem + "> gres(gm * gn), gg(gm * gk), gcol(gn * gk);");
  out.push_back("if (gk > 0) {");
  loop(vn, vn + "lo", vn + "hi");
  // The gradient as a [co x (oy ox)] matrix.
  out.push_back("std::int64_t gr = 0;");
  loop(co, "lo[0]", "hi[0]");
  loop(voy, voy + "lo", voy + "hi");
  loop(vox, vox + "lo", vox + "hi");
  out.push_back("gg[gr++] = in" + std::to_string(gt) + "[" +
                inputOffset(gt, {vn, co, voy, vox}) + "];");
  close(3);
  // The input as a [(ci ky kx) x (oy ox)] matrix, zero where padded.
  out.push_back("std::int64_t gc = 0;");
  loop(ci, "lo[1]", "hi[1]");
  loop(ky, "lo[2]", "hi[2]");
  loop(kx, "lo[3]", "hi[3]");
  loop(voy, voy + "lo", voy + "hi");
  loop(vox, vox + "lo", vox + "hi");
  scopes.emplace_back();
  std::string value = lowerValue(*c.b);
  for (std::string &line : scopes.back().lines)
    out.push_back(std::move(line));
  scopes.pop_back();
  out.push_back("gcol[gc++] = " + elem + "(" + value + ");");
  close(5);
  out.push_back("tofu_kg::" + gemmName(single) + "(tofu_kg::RowMajor, tofu_kg::NoTrans, tofu_kg::Trans, "
                "int(gm), int(gn), int(gk), 1, gg.data(), int(gk), "
                "gcol.data(), int(gk), 1, gres.data(), int(gn));");
  close(2);
  // The sum into the output box.
  out.push_back("std::int64_t go = 0;");
  loop(co, "lo[0]", "hi[0]");
  loop(ci, "lo[1]", "hi[1]");
  loop(ky, "lo[2]", "hi[2]");
  loop(kx, "lo[3]", "hi[3]");
  out.push_back("out[" + outputOffset({co, ci, ky, kx}) + "] = gres[go++];");
  close(4);
}
