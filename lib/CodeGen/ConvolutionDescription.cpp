//===- ConvolutionDescription.cpp - Convolutions for cuDNN ----------------===//
//
// This file implements KernelBuilder::describeConvolution: the DeviceConv
// of a convolution the im2col routing matched (Convolution.cpp), for the
// device executor's cuDNN calls. The strided read's index expressions are
// evaluated, not pattern-matched: per spatial dimension, a forward
// convolution or a weight gradient reads X row stride * y - padding +
// dilation * r at every (y, r) of their ranges; an input gradient reads dY
// row (h + padding - dilation * r) / stride exactly where that divides and
// lies in dY, and reads nothing (its `select` condition is false, or the
// row is outside dY) elsewhere. Stride, padding and dilation come from a
// few evaluations (for an input gradient, from the rows each kernel row
// reads, which may be a single one when dY has two rows) and are then
// checked over the whole ranges.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "tofu/TDL/ExprWalk.h"
#include "tofu/TDL/IntArith.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {
/// The value of the pure integer (or boolean, as 0 or 1) expression `e`
/// with index variable v at `values[v]` and params at `params`; None for
/// what is not integer arithmetic or logic (or divides by zero).
llvm::Optional<int64_t> evalInt(const Expr &e, ArrayRef<int64_t> values,
                                ArrayRef<int64_t> params) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return cast<IntLiteralExpr>(e).getValue();
  case Expr::Kind::Name: {
    const auto &name = cast<NameExpr>(e);
    if (const IndexVarDecl *var = name.getIndexVar())
      return values[var->getId()];
    if (const ParamDecl *param = name.getParam())
      return params[param->getPosition()];
    return llvm::None;
  }
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    llvm::Optional<int64_t> a = evalInt(un.getOperand(), values, params);
    if (!a)
      return llvm::None;
    return un.getOp() == UnaryOp::Neg ? -*a : int64_t(*a == 0);
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    llvm::Optional<int64_t> a = evalInt(bin.getLHS(), values, params),
                            b = evalInt(bin.getRHS(), values, params);
    if (!a || !b)
      return llvm::None;
    switch (bin.getOp()) {
    case BinaryOp::Add:
      return *a + *b;
    case BinaryOp::Sub:
      return *a - *b;
    case BinaryOp::Mul:
      return *a * *b;
    case BinaryOp::Div:
      return *b ? llvm::Optional<int64_t>(floorDiv(*a, *b)) : llvm::None;
    case BinaryOp::Rem:
      return *b ? llvm::Optional<int64_t>(floorMod(*a, *b)) : llvm::None;
    case BinaryOp::Eq:
      return int64_t(*a == *b);
    case BinaryOp::Ne:
      return int64_t(*a != *b);
    case BinaryOp::Lt:
      return int64_t(*a < *b);
    case BinaryOp::Le:
      return int64_t(*a <= *b);
    case BinaryOp::Gt:
      return int64_t(*a > *b);
    case BinaryOp::Ge:
      return int64_t(*a >= *b);
    case BinaryOp::And:
      return int64_t(*a && *b);
    case BinaryOp::Or:
      return int64_t(*a || *b);
    }
    return llvm::None;
  }
  default:
    return llvm::None;
  }
}

/// Appends the conjuncts of `e` (split at `&&`) to `out`.
void splitConjuncts(const Expr &e, SmallVectorImpl<const Expr *> &out) {
  if (const auto *bin = dyn_cast<BinaryExpr>(&e))
    if (bin->getOp() == BinaryOp::And) {
      splitConjuncts(bin->getLHS(), out);
      splitConjuncts(bin->getRHS(), out);
      return;
    }
  out.push_back(&e);
}

/// True if `e` uses no index variable other than `a` and `b`.
bool usesOnly(const Expr &e, unsigned a, unsigned b) {
  bool ok = true;
  walkExpr(e, [&](const Expr &sub) {
    if (const auto *name = dyn_cast<NameExpr>(&sub))
      if (const IndexVarDecl *var = name->getIndexVar())
        ok &= var->getId() == a || var->getId() == b;
  });
  return ok;
}
} // namespace

llvm::Optional<runtime::DeviceConv>
KernelBuilder::describeConvolution(const Contraction &c) const {
  if (!c.im2col)
    return llvm::None;
  using runtime::ConvKind;
  runtime::DeviceConv d;
  d.kind = c.weightGradient  ? ConvKind::BackwardFilter
           : c.weightSwapped ? ConvKind::BackwardData
                             : ConvKind::Forward;
  if (c.cond && d.kind != ConvKind::BackwardData)
    return llvm::None;
  d.weight = c.a->getTensor()->getPosition();
  d.input = c.b->getTensor()->getPosition();
  for (unsigned i = 0; i != 3; ++i)
    d.reduceVars[i] = c.reduce->getVars()[i]->getId();
  for (unsigned i = 0; i != 4; ++i) {
    d.inputShape[i] = inst.inputShapes[d.input][i];
    d.weightShape[i] = inst.inputShapes[d.weight][i];
    d.outputShape[i] = inst.outputShape[i];
  }
  // The condition's conjuncts, each on one spatial dimension's variables.
  SmallVector<const Expr *, 4> conjuncts;
  if (c.cond)
    splitConjuncts(*c.cond, conjuncts);
  SmallVector<const Expr *, 4> dimConds[2];
  for (const Expr *conj : conjuncts) {
    unsigned s = 0;
    while (s != 2 && !usesOnly(*conj, s + 2, d.reduceVars[s + 1]))
      ++s;
    if (s == 2)
      return llvm::None;
    dimConds[s].push_back(conj);
  }
  for (unsigned s = 0; s != 2; ++s) {
    // The strided read's row index is a function of a row variable (y of
    // the output, h of dX, or the reduction's y for a weight gradient) and
    // a kernel row variable.
    bool filter = d.kind == ConvKind::BackwardFilter;
    unsigned rowVar = filter ? d.reduceVars[s + 1] : s + 2;
    unsigned kVar = filter ? s + 2 : d.reduceVars[s + 1];
    const Expr &index = c.b->getIndex(s + 2);
    SmallVector<int64_t, 16> values(varExtents.size(), 0);
    auto at = [&](int64_t o, int64_t k) {
      values[rowVar] = o;
      values[kVar] = k;
      return evalInt(index, values, intParams);
    };
    int64_t rows = varExtents[rowVar], kRows = varExtents[kVar];
    int64_t &stride = d.stride[s], &padding = d.padding[s],
            &dilation = d.dilation[s];
    if (d.kind != ConvKind::BackwardData) {
      llvm::Optional<int64_t> base = at(0, 0), one = at(1, 0), kone = at(0, 1);
      if (!base || !one || !kone)
        return llvm::None;
      padding = -*base;
      stride = *one - *base;
      dilation = *kone - *base;
      if (stride <= 0 || dilation <= 0 || padding < 0)
        return llvm::None;
      for (int64_t o = 0; o != rows; ++o)
        for (int64_t k = 0; k != kRows; ++k)
          if (at(o, k) != stride * o - padding + dilation * k)
            return llvm::None;
      continue;
    }
    // Input gradient: the dY row dX row h takes from kernel row r, or -1
    // for none (the condition fails or the row is outside dY).
    int64_t dyRows = d.inputShape[s + 2];
    auto source = [&](int64_t h, int64_t r) -> llvm::Optional<int64_t> {
      values[rowVar] = h;
      values[kVar] = r;
      for (const Expr *conj : dimConds[s]) {
        llvm::Optional<int64_t> holds = evalInt(*conj, values, intParams);
        if (!holds)
          return llvm::None;
        if (!*holds)
          return -1;
      }
      llvm::Optional<int64_t> y = evalInt(index, values, intParams);
      if (!y)
        return llvm::None;
      return *y >= 0 && *y < dyRows ? *y : -1;
    };
    // The sources (h, y) of each kernel row r: h = stride y - padding +
    // dilation r. Two of one kernel row give the stride, then y stride - h
    // = padding - dilation r of two kernel rows padding and dilation.
    SmallVector<SmallVector<std::pair<int64_t, int64_t>, 4>, 8> sources(kRows);
    for (int64_t r = 0; r != kRows; ++r)
      for (int64_t h = 0; h != rows; ++h) {
        llvm::Optional<int64_t> y = source(h, r);
        if (!y)
          return llvm::None;
        if (*y >= 0)
          sources[r].emplace_back(h, *y);
      }
    stride = 0;
    for (const auto &list : sources)
      if (list.size() >= 2 && list[1].second != list[0].second) {
        stride = (list[1].first - list[0].first) /
                 (list[1].second - list[0].second);
        break;
      }
    // One dY row: every source has y = 0 and any stride large enough that
    // cuDNN computes one row is the convolution (set below).
    bool oneRow = stride == 0 && dyRows == 1;
    if (oneRow)
      stride = 1;
    if (stride <= 0)
      return llvm::None;
    SmallVector<std::pair<int64_t, int64_t>, 2> offsets; // (r, padding - d r)
    for (int64_t r = 0; r != kRows && offsets.size() != 2; ++r)
      if (!sources[r].empty())
        offsets.emplace_back(r, stride * sources[r][0].second -
                                    sources[r][0].first);
    if (offsets.empty())
      return llvm::None;
    dilation = 1;
    if (offsets.size() == 2)
      dilation = (offsets[0].second - offsets[1].second) /
                 (offsets[1].first - offsets[0].first);
    padding = offsets[0].second + dilation * offsets[0].first;
    if (oneRow)
      stride = std::max<int64_t>(1, rows + 2 * padding - dilation * (kRows - 1));
    if (stride <= 0 || dilation <= 0 || padding < 0)
      return llvm::None;
    for (int64_t h = 0; h != rows; ++h)
      for (int64_t r = 0; r != kRows; ++r) {
        int64_t t = h + padding - dilation * r;
        int64_t want = floorMod(t, stride) == 0 && floorDiv(t, stride) < dyRows
                           ? floorDiv(t, stride)
                           : -1;
        if (source(h, r) != llvm::Optional<int64_t>(want < 0 ? -1 : want))
          return llvm::None;
      }
  }
  return d;
}
