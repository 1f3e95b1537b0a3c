//===- BatchNorm.cpp - Recognise a batch norm for cuDNN -------------------===//
//
// This file implements KernelBuilder::matchBatchNorm: a body of the form of
// native_batch_norm__0 in training mode (specs/norm.tdl), over the output
// (n, c, y, x) or (n, c):
//
//   (X[n, c, y, x] - Sum(X[n1, c, y1, x1]) / M) *
//     rsqrt(Sum(X * X) / M - Sum(X) * Sum(X) / (M * M) + eps) * W[c] + B[c]
//
// each sum over its own variables reading X with c in the channel dimension
// and its variables, in order, in the others; M and M * M constants equal
// to N H W and its square; eps a constant; X, W, B and the output of one
// floating-point type. That is cuDNN's spatial batch normalization in
// training mode with the biased variance, so it is described for
// cudnnBatchNormalizationForwardTraining (DeviceBatchNorm.h). Anything
// else, including the same value written another way, is not matched and
// stays a generated kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::tdl;

namespace {

const BinaryExpr *asBinary(const Expr &e, BinaryOp op) {
  const auto *bin = dyn_cast<BinaryExpr>(&e);
  return bin && bin->getOp() == op ? bin : nullptr;
}

bool isVar(const Expr &e, unsigned id) {
  const auto *name = dyn_cast<NameExpr>(&e);
  return name && name->getIndexVar() && name->getIndexVar()->getId() == id;
}

/// A read of tensor `t` at the index variables `ids`.
bool isReadOf(const Expr &e, unsigned t, ArrayRef<unsigned> ids) {
  const auto *read = dyn_cast<TensorReadExpr>(&e);
  if (!read || !read->getTensor() || read->getTensor()->getPosition() != t ||
      read->getNumIndices() != ids.size())
    return false;
  for (unsigned d = 0; d != ids.size(); ++d)
    if (!isVar(read->getIndex(d), ids[d]))
      return false;
  return true;
}

} // namespace

llvm::Optional<runtime::DeviceBatchNorm> KernelBuilder::matchBatchNorm() const {
  unsigned rank = op.getOutputRank();
  DType type = inst.outputType;
  if ((rank != 4 && rank != 2) || (type != DType::F32 && type != DType::F64))
    return llvm::None;
  runtime::DeviceBatchNorm b;
  b.rank = rank;
  // ... * W[c] + B[c]
  const BinaryExpr *add = asBinary(op.getBody(), BinaryOp::Add);
  const BinaryExpr *scaled = add ? asBinary(add->getLHS(), BinaryOp::Mul) : nullptr;
  const auto *bias = add ? dyn_cast<TensorReadExpr>(&add->getRHS()) : nullptr;
  const auto *weight =
      scaled ? dyn_cast<TensorReadExpr>(&scaled->getRHS()) : nullptr;
  if (!bias || !weight || !bias->getTensor() || !weight->getTensor())
    return llvm::None;
  b.bias = bias->getTensor()->getPosition();
  b.weight = weight->getTensor()->getPosition();
  if (!isReadOf(*bias, b.bias, {1}) || !isReadOf(*weight, b.weight, {1}))
    return llvm::None;
  // (X[n, c, ..] - mean) * rsqrt(var + eps)
  const BinaryExpr *normed = asBinary(scaled->getLHS(), BinaryOp::Mul);
  const BinaryExpr *centred = normed ? asBinary(normed->getLHS(), BinaryOp::Sub) : nullptr;
  const auto *rsqrt = normed ? dyn_cast<CallExpr>(&normed->getRHS()) : nullptr;
  const auto *x = centred ? dyn_cast<TensorReadExpr>(&centred->getLHS()) : nullptr;
  if (!x || !x->getTensor() || !rsqrt || rsqrt->getBuiltin() != Builtin::Rsqrt)
    return llvm::None;
  b.input = x->getTensor()->getPosition();
  SmallVector<unsigned, 4> outVars;
  for (unsigned d = 0; d != rank; ++d)
    outVars.push_back(d);
  if (!isReadOf(*x, b.input, outVars) || b.input == b.weight ||
      b.input == b.bias || b.weight == b.bias)
    return llvm::None;
  for (unsigned t : {b.input, b.weight, b.bias})
    if (inst.inputTypes[t] != type)
      return llvm::None;
  const Shape &shape = inst.inputShapes[b.input];
  if (shape.size() != rank || inst.inputShapes[b.weight].size() != 1 ||
      inst.inputShapes[b.bias].size() != 1 ||
      inst.inputShapes[b.weight][0] != shape[1] ||
      inst.inputShapes[b.bias][0] != shape[1])
    return llvm::None;
  for (unsigned d = 0; d != rank; ++d)
    b.shape[d] = shape[d];
  int64_t m = b.shape[0] * b.shape[2] * b.shape[3];
  // Sum(lambda v..: X[v0, c, v1, v2]) (X * X when `square`).
  auto isSum = [&](const Expr &e, bool square) {
    const auto *reduce = dyn_cast<ReduceExpr>(&e);
    if (!reduce || reduce->getReducer() != Reducer::Sum ||
        reduce->getVars().size() != rank - 1)
      return false;
    SmallVector<unsigned, 4> ids;
    for (unsigned d = 0; d != rank; ++d)
      ids.push_back(d == 1 ? 1 : reduce->getVars()[d ? d - 1 : 0]->getId());
    for (unsigned v = 0; v != rank - 1; ++v)
      if (varExtents[reduce->getVars()[v]->getId()] != shape[v ? v + 1 : 0])
        return false;
    if (!square)
      return isReadOf(reduce->getBody(), b.input, ids);
    const BinaryExpr *mul = asBinary(reduce->getBody(), BinaryOp::Mul);
    return mul && isReadOf(mul->getLHS(), b.input, ids) &&
           isReadOf(mul->getRHS(), b.input, ids);
  };
  // `sum` / `divisor`, the divisor a constant.
  auto isMean = [&](const Expr &e, int64_t divisor,
                    llvm::function_ref<bool(const Expr &)> sum) {
    const BinaryExpr *div = asBinary(e, BinaryOp::Div);
    llvm::Optional<int64_t> d = div ? foldInt(div->getRHS()) : llvm::None;
    return d && *d == divisor && sum(div->getLHS());
  };
  auto plainSum = [&](const Expr &e) { return isSum(e, false); };
  if (!isMean(centred->getRHS(), m, plainSum))
    return llvm::None;
  // Sum(X * X) / M - Sum(X) * Sum(X) / (M * M) + eps
  const BinaryExpr *shifted = asBinary(rsqrt->getArg(0), BinaryOp::Add);
  const BinaryExpr *var = shifted ? asBinary(shifted->getLHS(), BinaryOp::Sub) : nullptr;
  if (!var ||
      !isMean(var->getLHS(), m, [&](const Expr &e) { return isSum(e, true); }) ||
      !isMean(var->getRHS(), m * m, [&](const Expr &e) {
        const BinaryExpr *mul = asBinary(e, BinaryOp::Mul);
        return mul && plainSum(mul->getLHS()) && plainSum(mul->getRHS());
      }))
    return llvm::None;
  const Expr &eps = shifted->getRHS();
  if (const auto *lit = dyn_cast<FloatLiteralExpr>(&eps))
    b.epsilon = lit->getValue();
  else if (const auto *name = dyn_cast<NameExpr>(&eps); name && name->getParam())
    b.epsilon = inst.params[name->getParam()->getPosition()];
  else
    return llvm::None;
  if (!(b.epsilon > 0))
    return llvm::None;
  b.varExtents.assign(varExtents.begin(), varExtents.end());
  return b;
}
