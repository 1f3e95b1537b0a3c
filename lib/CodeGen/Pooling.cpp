//===- Pooling.cpp - Recognise a 2-D pooling for cuDNN --------------------===//
//
// This file implements KernelBuilder::matchPooling: over the output
// (n, c, y, x), a body
//
//   Max(lambda ky, kx: X[n, c, IY, IX])
//   Max(lambda ky, kx: select(IY >= 0 && IY < H && IX >= 0 && IX < W,
//                             X[n, c, IY, IX], L))     (L <= lowest f32)
//   Sum(lambda ky, kx: X[n, c, IY, IX]) / D            (D = window size)
//
// with IY = stride y + ky - padding and IX likewise (integer-linear in the
// variable and params; dilation 1, which is all cuDNN pools with), X and
// the output of one floating-point type. Without the select, the padding
// must be 0 (a read outside X would give 0, not what cuDNN's max pools
// with), and an average must not be padded (its divisor would count
// padding). The bound L stands for -inf: every window of the spec's
// max_pool2d holds a real element, so only a window whose real elements
// are all below L (never in f32) differs from cuDNN's maximum.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include <map>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {

/// An integer expression as `sum coef[v] * v + constant`.
struct LinearForm {
  std::map<unsigned, int64_t> coef;
  int64_t constant = 0;
  bool operator==(const LinearForm &o) const {
    return coef == o.coef && constant == o.constant;
  }
};

/// Adds `scale * e` to `form`; false if `e` is not linear in index
/// variables with constant coefficients (`fold` evaluates constants).
bool addLinear(const Expr &e, int64_t scale, LinearForm &form,
               llvm::function_ref<llvm::Optional<int64_t>(const Expr &)> fold) {
  if (llvm::Optional<int64_t> v = fold(e)) {
    form.constant += scale * *v;
    return true;
  }
  if (const auto *name = dyn_cast<NameExpr>(&e)) {
    if (!name->getIndexVar())
      return false;
    unsigned id = name->getIndexVar()->getId();
    if ((form.coef[id] += scale) == 0)
      form.coef.erase(id);
    return true;
  }
  if (const auto *un = dyn_cast<UnaryExpr>(&e))
    return un->getOp() == UnaryOp::Neg &&
           addLinear(un->getOperand(), -scale, form, fold);
  const auto *bin = dyn_cast<BinaryExpr>(&e);
  if (!bin)
    return false;
  switch (bin->getOp()) {
  case BinaryOp::Add:
    return addLinear(bin->getLHS(), scale, form, fold) &&
           addLinear(bin->getRHS(), scale, form, fold);
  case BinaryOp::Sub:
    return addLinear(bin->getLHS(), scale, form, fold) &&
           addLinear(bin->getRHS(), -scale, form, fold);
  case BinaryOp::Mul:
    if (llvm::Optional<int64_t> c = fold(bin->getLHS()))
      return addLinear(bin->getRHS(), scale * *c, form, fold);
    if (llvm::Optional<int64_t> c = fold(bin->getRHS()))
      return addLinear(bin->getLHS(), scale * *c, form, fold);
    return false;
  default:
    return false;
  }
}

/// The real constant `e` is (a literal, possibly negated).
llvm::Optional<double> realLiteral(const Expr &e) {
  if (const auto *lit = dyn_cast<FloatLiteralExpr>(&e))
    return lit->getValue();
  if (const auto *un = dyn_cast<UnaryExpr>(&e))
    if (un->getOp() == UnaryOp::Neg)
      if (llvm::Optional<double> v = realLiteral(un->getOperand()))
        return -*v;
  return llvm::None;
}

/// The conjuncts of `e` (`a && b && ..`).
void conjuncts(const Expr &e, SmallVectorImpl<const Expr *> &out) {
  const auto *bin = dyn_cast<BinaryExpr>(&e);
  if (bin && bin->getOp() == BinaryOp::And) {
    conjuncts(bin->getLHS(), out);
    conjuncts(bin->getRHS(), out);
    return;
  }
  out.push_back(&e);
}

} // namespace

llvm::Optional<runtime::DevicePooling> KernelBuilder::matchPooling() const {
  DType type = inst.outputType;
  if (op.getOutputRank() != 4 || (type != DType::F32 && type != DType::F64))
    return llvm::None;
  runtime::DevicePooling p;
  const Expr *body = &op.getBody();
  int64_t divisor = 0;
  if (const auto *div = dyn_cast<BinaryExpr>(body);
      div && div->getOp() == BinaryOp::Div) {
    llvm::Optional<int64_t> d = foldInt(div->getRHS());
    if (!d)
      return llvm::None;
    divisor = *d;
    body = &div->getLHS();
    p.mode = runtime::PoolingMode::Average;
  }
  const auto *reduce = dyn_cast<ReduceExpr>(body);
  if (!reduce || reduce->getVars().size() != 2 ||
      reduce->getReducer() != (divisor ? Reducer::Sum : Reducer::Max))
    return llvm::None;
  p.ky = reduce->getVars()[0]->getId();
  p.kx = reduce->getVars()[1]->getId();
  p.window[0] = varExtents[p.ky];
  p.window[1] = varExtents[p.kx];
  if (divisor && divisor != p.window[0] * p.window[1])
    return llvm::None;
  const Expr *value = &reduce->getBody();
  const CallExpr *select = dyn_cast<CallExpr>(value);
  if (select && select->getBuiltin() == Builtin::Select && !divisor) {
    llvm::Optional<double> low = realLiteral(select->getArg(2));
    if (!low || *low > -3.4028234663852886e38)
      return llvm::None;
    value = &select->getArg(1);
  } else {
    select = nullptr;
  }
  const auto *read = dyn_cast<TensorReadExpr>(value);
  if (!read || !read->getTensor() || read->getNumIndices() != 4)
    return llvm::None;
  p.input = read->getTensor()->getPosition();
  const Shape &shape = inst.inputShapes[p.input];
  if (inst.inputTypes[p.input] != type || shape.size() != 4)
    return llvm::None;
  auto fold = [&](const Expr &e) { return foldInt(e); };
  // X[n, c, ..] with n, c the output's first variables inside X.
  LinearForm index[4];
  for (unsigned d = 0; d != 4; ++d)
    if (!addLinear(read->getIndex(d), 1, index[d], fold))
      return llvm::None;
  for (unsigned d = 0; d != 2; ++d)
    if (!(index[d] == LinearForm{{{d, 1}}, 0}) || varExtents[d] > shape[d])
      return llvm::None;
  // IY = stride y + ky - padding, IX likewise.
  unsigned kernelVar[2] = {p.ky, p.kx};
  for (unsigned s = 0; s != 2; ++s) {
    const LinearForm &f = index[s + 2];
    auto term = f.coef.find(s + 2);
    auto k = f.coef.find(kernelVar[s]);
    if (f.coef.size() != 2 || term == f.coef.end() || k == f.coef.end() ||
        k->second != 1 || term->second <= 0 || f.constant > 0)
      return llvm::None;
    p.stride[s] = term->second;
    p.padding[s] = -f.constant;
  }
  for (unsigned d = 0; d != 4; ++d) {
    p.inputShape[d] = shape[d];
    p.outputShape[d] = inst.outputShape[d];
  }
  if (!select)
    return p.padding[0] == 0 && p.padding[1] == 0
               ? llvm::Optional<runtime::DevicePooling>(p)
               : llvm::None;
  // The select keeps exactly the reads inside X: IY >= 0, IY < H, IX >= 0,
  // IX < W, in any order.
  SmallVector<const Expr *, 4> conds;
  conjuncts(select->getArg(0), conds);
  unsigned found = 0;
  for (const Expr *cond : conds) {
    const auto *cmp = dyn_cast<BinaryExpr>(cond);
    if (!cmp || (cmp->getOp() != BinaryOp::Ge && cmp->getOp() != BinaryOp::Lt))
      return llvm::None;
    LinearForm lhs;
    llvm::Optional<int64_t> bound = foldInt(cmp->getRHS());
    if (!bound || !addLinear(cmp->getLHS(), 1, lhs, fold))
      return llvm::None;
    unsigned bit = 0;
    for (unsigned d : {2u, 3u})
      if (lhs == index[d])
        bit = cmp->getOp() == BinaryOp::Ge ? (*bound == 0 ? 1u << (2 * d - 4) : 0)
                                           : (*bound == shape[d] ? 2u << (2 * d - 4) : 0);
    if (!bit)
      return llvm::None;
    found |= bit;
  }
  if (found != 15)
    return llvm::None;
  return p;
}
