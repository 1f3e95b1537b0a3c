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
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"

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

bool isVar(const Expr &e, unsigned id) {
  const auto *name = dyn_cast<NameExpr>(&e);
  return name && name->getIndexVar() && name->getIndexVar()->getId() == id;
}

} // namespace

llvm::Optional<Contraction> KernelBuilder::matchConvolution() {
  DType type = inst.outputType;
  if (op.getOutputRank() != 4 || (type != DType::F32 && type != DType::F64))
    return llvm::None;
  const auto *reduce = dyn_cast<ReduceExpr>(&op.getBody());
  if (!reduce || reduce->getReducer() != Reducer::Sum ||
      reduce->getVars().size() != 3)
    return llvm::None;
  const auto *mul = dyn_cast<BinaryExpr>(&reduce->getBody());
  if (!mul || mul->getOp() != BinaryOp::Mul)
    return llvm::None;
  const auto *x = dyn_cast<TensorReadExpr>(&mul->getLHS());
  const auto *w = dyn_cast<TensorReadExpr>(&mul->getRHS());
  if (!x || !w || !x->getTensor() || !w->getTensor())
    return llvm::None;
  unsigned n = 0, co = 1, y = 2, xv = 3;
  unsigned ci = reduce->getVars()[0]->getId(), ky = reduce->getVars()[1]->getId(),
           kx = reduce->getVars()[2]->getId();
  if (x->getNumIndices() != 4 || w->getNumIndices() != 4)
    return llvm::None;
  // W[co, ci, ky, kx], inside the weight tensor.
  unsigned wt = w->getTensor()->getPosition(), xt = x->getTensor()->getPosition();
  unsigned wantW[4] = {co, ci, ky, kx};
  for (unsigned d = 0; d != 4; ++d)
    if (!isVar(w->getIndex(d), wantW[d]) ||
        varExtents[wantW[d]] > inst.inputShapes[wt][d])
      return llvm::None;
  // X[n, ci, IY(y, ky), IX(x, kx)].
  if (!isVar(x->getIndex(0), n) || !isVar(x->getIndex(1), ci) ||
      varExtents[n] > inst.inputShapes[xt][0] ||
      varExtents[ci] > inst.inputShapes[xt][1])
    return llvm::None;
  for (auto [d, outer, inner] : {std::make_tuple(2u, y, ky), std::make_tuple(3u, xv, kx)}) {
    const Expr &index = x->getIndex(d);
    if (!isPureInt(index))
      return llvm::None;
    for (unsigned v : usedVars(index))
      if (v != outer && v != inner)
        return llvm::None;
  }
  if (inst.inputTypes[wt] != type || inst.inputTypes[xt] != type)
    return llvm::None;
  Contraction c;
  c.reduce = reduce;
  c.a = w;
  c.b = x;
  c.wholeBody = true;
  c.im2col = true;
  return c;
}

void KernelBuilder::emitConvolution(const Contraction &c,
                                    std::vector<std::string> &out) {
  bool single = inst.outputType == DType::F32;
  std::string elem = single ? "float" : "double";
  unsigned ci = c.reduce->getVars()[0]->getId(),
           ky = c.reduce->getVars()[1]->getId(),
           kx = c.reduce->getVars()[2]->getId();
  std::string n = varName(0), co = varName(1), y = varName(2), x = varName(3);
  std::string vci = varName(ci), vky = varName(ky), vkx = varName(kx);
  unsigned wt = c.a->getTensor()->getPosition();
  auto loop = [&](const std::string &v, const std::string &lo,
                  const std::string &hi) {
    out.push_back("for (std::int64_t " + v + " = " + lo + "; " + v + " < " +
                  hi + "; ++" + v + ") {");
  };
  out.push_back(std::string("// im2col and ") +
                (single ? "cblas_sgemm" : "cblas_dgemm") +
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
                inputOffset(wt, {co, vci, vky, vkx}) + "];");
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
  for (std::string &line : scopes.back().lines)
    out.push_back(std::move(line));
  scopes.pop_back();
  out.push_back("gcol[gc++] = " + elem + "(" + value + ");");
  for (unsigned i = 0; i != 5; ++i)
    out.push_back("}");
  out.push_back("if (gk > 0) {");
  out.push_back(std::string("tofu_kg::cblas_") + (single ? "s" : "d") +
                "gemm(tofu_kg::RowMajor, tofu_kg::NoTrans, tofu_kg::NoTrans, "
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
