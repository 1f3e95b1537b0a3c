//===- OpChecker.h - The per-operator semantic checker ----------*- C++ -*-===//
//
// This file declares OpChecker, which checks and annotates one operator
// (private to lib/TDL): Sema.cpp implements its core (names, ranks,
// extents, types), SemaGeneric.cpp the checks of the generic-operator
// extensions (guards, ellipses, dim/rank, opaque, real params), and
// IndexClassify.cpp the classification of tensor indices.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_TDL_OPCHECKER_H
#define TOFU_LIB_TDL_OPCHECKER_H

#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/AST.h"
#include "tofu/TDL/Sema.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace tofu {
namespace tdl {
namespace detail {

/// Classifies a resolved index expression (see IndexKind).
IndexKind classifyIndex(const Expr &e);

/// What Sema learns about one reduction variable while walking the body.
struct ReductionVarUses {
  SMLoc firstUse;
  /// The first tensor dimension indexed by the variable alone.
  const TensorDecl *tensor = nullptr;
  unsigned dim = 0;
};

/// Checks one operator.
class OpChecker {
public:
  OpChecker(OpDecl &op, DiagnosticEngine &diags) : op(op), diags(diags) {}

  void check();

private:
  void declareNames();
  bool declare(StringRef name, SMLoc loc);
  void declareOutputVars(std::vector<const IndexVarDecl *> &vars);
  void numberVars(Expr &e, std::vector<const IndexVarDecl *> &vars);
  void checkGuard(Expr &guard);

  /// Resolves, types and classifies `e`, with `scope` the index variables
  /// visible there.
  void checkExpr(Expr &e);
  void checkName(NameExpr &e);
  void checkTensorRead(TensorReadExpr &e);
  void checkCall(CallExpr &e);
  void checkReduce(ReduceExpr &e);
  void checkUnary(UnaryExpr &e);
  void checkBinary(BinaryExpr &e);
  bool checkShapeQuery(CallExpr &e, Builtin builtin);
  bool checkOpaque(CallExpr &e);
  bool checkEllipsisIndex(TensorReadExpr &read, NameExpr &index);
  void fixRank(TensorReadExpr &e, TensorDecl &tensor, unsigned numEllipses);
  void checkExplicitExtent(IndexVarDecl &var);
  void resolveReductionExtent(IndexVarDecl &var);
  void reportFloatIndex(const Expr &index);
  void reportRealParams(const Expr &e, const Twine &where);
  void warnUnreadTensors();

  const IndexVarDecl *lookupVisibleVar(StringRef name) const;

  OpDecl &op;
  DiagnosticEngine &diags;
  /// Every declared name of the operator, for duplicate detection.
  llvm::StringMap<SMLoc> declared;
  /// Index variables visible at the current point, innermost last.
  std::vector<const IndexVarDecl *> scope;
  /// Every reduction variable by name, to tell "out of scope" from
  /// "unknown".
  llvm::StringMap<const IndexVarDecl *> allReductionVars;
  llvm::DenseMap<const IndexVarDecl *, ReductionVarUses> uses;
  /// True while checking an explicit extent, where only params may appear.
  bool inExtent = false;
  /// True if that extent is an output variable's.
  bool inOutputExtent = false;
  /// True while checking the guard.
  bool inGuard = false;
  /// True while checking the reads of `opaque(...)`, where unknown names are
  /// free indices (the whole dimension).
  bool inOpaque = false;
  /// True once a `dim` or `rank` call was seen.
  bool sawShapeQuery = false;
};

} // namespace detail
} // namespace tdl
} // namespace tofu

#endif // TOFU_LIB_TDL_OPCHECKER_H
