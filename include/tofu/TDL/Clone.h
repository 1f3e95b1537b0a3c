//===- Clone.h - Deep copies of TDL operators -------------------*- C++ -*-===//
//
// This file declares OpCloner, which copies an operator's syntax tree (the
// parts the parser builds; Sema's annotations are not copied, the copy is
// checked afresh). Its hooks let a subclass rewrite while copying: expand
// an output variable into several, replace an index of a tensor read by
// several, fold a call, or drop the guard. The Instantiator is such a
// subclass.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_CLONE_H
#define TOFU_TDL_CLONE_H

#include "tofu/TDL/AST.h"

namespace tofu {
namespace tdl {

/// Copies operators and expressions, with hooks for rewriting.
class OpCloner {
public:
  virtual ~OpCloner();

  /// Copies `op`: params, tensors, output variables (through
  /// cloneOutputVar), guard (through cloneGuard) and body.
  std::unique_ptr<OpDecl> cloneOp(const OpDecl &op);
  /// Copies an expression tree.
  ExprPtr cloneExpr(const Expr &e);

protected:
  /// Appends the copies of output variable `var`; by default one.
  virtual void cloneOutputVar(const IndexVarDecl &var, IndexVarList &out);
  /// Appends the copies of `index`, an index of `read`; by default one.
  virtual void cloneIndex(const TensorReadExpr &read, const Expr &index,
                          std::vector<ExprPtr> &out);
  /// Copies a call; by default with its arguments copied.
  virtual ExprPtr cloneCall(const CallExpr &call);
  /// Copies the guard; null drops it. By default a copy.
  virtual ExprPtr cloneGuard(const Expr &guard);

  /// Copies one variable declaration (name, role, extent, ellipsis flag).
  std::unique_ptr<IndexVarDecl> cloneVar(const IndexVarDecl &var);
};

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_CLONE_H
