//===- ExprWalk.h - Pre-order traversal of TDL expressions ------*- C++ -*-===//
//
// This file declares walkExpr, the one generic traversal of an expression
// tree. Passes that only care about some node kinds (collect the tensor
// reads, find a variable's uses) use it with isa/dyn_cast instead of
// writing their own recursion. Extent expressions of reduction variables
// are not visited; they belong to the variable, not to the body.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_EXPRWALK_H
#define TOFU_TDL_EXPRWALK_H

#include "tofu/TDL/AST.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace tofu {
namespace tdl {

/// Calls `fn` on `e` and then on each of its subexpressions, in source
/// order.
void walkExpr(const Expr &e, llvm::function_ref<void(const Expr &)> fn);

/// The tensor reads of `op`'s body in source order, nested reads (inside
/// indices) after the read that contains them.
std::vector<const TensorReadExpr *> collectTensorReads(const OpDecl &op);

/// The ids of the index variables `e`'s body uses that neither `e` nor a
/// reduction inside it binds, in increasing order.
llvm::SmallVector<unsigned, 4> collectFreeIndexVars(const ReduceExpr &e);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_EXPRWALK_H
