//===- ShapeExpr.cpp - Integer expressions over params and shapes ---------===//
//
// This file implements evaluateShapeExpr and evaluateShapeQuery: the
// integer evaluation of guards and of `dim`/`rank` calls at concrete input
// shapes. Arithmetic is exact int64 with floor division, as in the rest of
// TDL's integer semantics.
//
//===----------------------------------------------------------------------===//

#include "InstantiateImpl.h"

#include "tofu/TDL/IntArith.h"
#include "tofu/TDL/Printers.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

namespace {

class Evaluator {
public:
  Evaluator(const OpDecl &op, ArrayRef<ParamValue> params,
            ArrayRef<Shape> shapes, std::string &why)
      : op(op), params(params), shapes(shapes), why(why) {}

  llvm::Optional<int64_t> eval(const Expr &e);

private:
  llvm::Optional<int64_t> evalCall(const CallExpr &call);
  llvm::Optional<int64_t> fail(const Expr &e) {
    why = "cannot evaluate '" + exprToString(e) + "' at instantiation";
    return llvm::None;
  }

  const OpDecl &op;
  ArrayRef<ParamValue> params;
  ArrayRef<Shape> shapes;
  std::string &why;
};

} // namespace

llvm::Optional<int64_t> Evaluator::evalCall(const CallExpr &call) {
  llvm::Optional<Builtin> builtin = call.getBuiltin();
  if (builtin == Builtin::Dim || builtin == Builtin::Rank)
    return evaluateShapeQuery(call, op, shapes, why);
  SmallVector<int64_t, 3> args;
  for (const ExprPtr &arg : call.getArgs()) {
    llvm::Optional<int64_t> v = eval(*arg);
    if (!v)
      return llvm::None;
    args.push_back(*v);
  }
  llvm::Optional<int64_t> value =
      builtin ? applyIntBuiltin(*builtin, args) : llvm::None;
  return value ? value : fail(call);
}

llvm::Optional<int64_t> Evaluator::eval(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return cast<IntLiteralExpr>(e).getValue();
  case Expr::Kind::Name: {
    const ParamDecl *param = cast<NameExpr>(e).getParam();
    if (!param || param->isReal())
      return fail(e);
    return params[param->getPosition()].intValue;
  }
  case Expr::Kind::Call:
    return evalCall(cast<CallExpr>(e));
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    llvm::Optional<int64_t> v = eval(un.getOperand());
    if (!v)
      return llvm::None;
    return un.getOp() == UnaryOp::Neg ? -*v : int64_t(!*v);
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    llvm::Optional<int64_t> a = eval(bin.getLHS());
    if (!a)
      return llvm::None;
    // `&&` and `||` short-circuit, so `rank(x) > 1 && dim(x, 1) == 3` is safe.
    if ((bin.getOp() == BinaryOp::And && !*a) ||
        (bin.getOp() == BinaryOp::Or && *a))
      return int64_t(bin.getOp() == BinaryOp::Or);
    llvm::Optional<int64_t> b = eval(bin.getRHS());
    if (!b)
      return llvm::None;
    llvm::Optional<int64_t> value = applyIntBinary(bin.getOp(), *a, *b);
    if (!value)
      why = "division by zero in '" + exprToString(e) + "'";
    return value;
  }
  default:
    return fail(e);
  }
}

llvm::Optional<int64_t> detail::evaluateShapeExpr(const Expr &e,
                                                  const OpDecl &op,
                                                  ArrayRef<ParamValue> params,
                                                  ArrayRef<Shape> shapes,
                                                  std::string &why) {
  return Evaluator(op, params, shapes, why).eval(e);
}

int64_t detail::getDimQueryArg(const CallExpr &call) {
  // Sema checked that K is a literal, maybe negated.
  const Expr &arg = call.getArg(1);
  if (auto *lit = dyn_cast<IntLiteralExpr>(&arg))
    return lit->getValue();
  return -cast<IntLiteralExpr>(cast<UnaryExpr>(arg).getOperand()).getValue();
}

llvm::Optional<int64_t> detail::evaluateShapeQuery(const CallExpr &call,
                                                   const OpDecl &op,
                                                   ArrayRef<Shape> shapes,
                                                   std::string &why) {
  // Sema checked that argument 0 names a tensor and K is a literal.
  StringRef name = cast<NameExpr>(call.getArg(0)).getName();
  const Shape &shape = shapes[op.lookupTensor(name)->getPosition()];
  int64_t rank = shape.size();
  if (call.getBuiltin() == Builtin::Rank)
    return rank;
  int64_t k = getDimQueryArg(call);
  int64_t dim = k < 0 ? k + rank : k;
  if (dim < 0 || dim >= rank) {
    why = ("'" + exprToString(call) + "': '" + name + "' has rank " +
           Twine(rank) + " (shape " + formatShape(shape) + ")")
              .str();
    return llvm::None;
  }
  return shape[dim];
}
