//===- InstantiateImpl.h - Pieces of the Instantiator -----------*- C++ -*-===//
//
// This file declares the steps of instantiation shared by the files that
// implement it (private to lib/TDL): evaluating guard-like expressions over
// params and shapes, matching one overload against a use, and building the
// concrete operator.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_TDL_INSTANTIATEIMPL_H
#define TOFU_LIB_TDL_INSTANTIATEIMPL_H

#include "tofu/TDL/Instantiate.h"

namespace tofu {
namespace tdl {
namespace detail {

/// One use of an operator, as given to Instantiator::instantiate.
struct Use {
  StringRef opName;
  ArrayRef<Shape> inputShapes;
  ArrayRef<NamedParamValue> params;
  llvm::Optional<unsigned> outputRank;
  /// The output shape when known (then of rank *outputRank), else empty.
  ArrayRef<int64_t> outputShape;
};

/// Evaluates an integer expression over int params (values by position),
/// literals, `rank(T)` and `dim(T, K)`: a guard or an index constant.
/// Comparisons and `&& || !` give 0 or 1. None, with `why` set, if it
/// cannot be evaluated (division by zero, `dim` out of range, a name that
/// is not a param).
llvm::Optional<int64_t> evaluateShapeExpr(const Expr &e, const OpDecl &op,
                                          ArrayRef<ParamValue> params,
                                          ArrayRef<Shape> shapes,
                                          std::string &why);

/// The value of `dim(T, K)` or `rank(T)` of `op` at these shapes; None
/// with `why` set if K is out of range (a negative K counts from the end).
llvm::Optional<int64_t> evaluateShapeQuery(const CallExpr &call,
                                           const OpDecl &op,
                                           ArrayRef<Shape> shapes,
                                           std::string &why);

/// Checks `op` against `use`: param names (as a set), int param values,
/// tensor count, fixed tensor ranks, output rank, and the guard. Returns
/// the empty string and fills `values` (in op's param order) on a match,
/// otherwise why it does not match.
std::string matchOverload(const OpDecl &op, const Use &use,
                          SmallVectorImpl<ParamValue> &values);

/// Builds and checks the concrete form of generic operator `op` for `use`,
/// which it matches.
llvm::Expected<std::unique_ptr<OpDecl>> buildInstanceOp(const OpDecl &op,
                                                        const Use &use);

} // namespace detail
} // namespace tdl
} // namespace tofu

#endif // TOFU_LIB_TDL_INSTANTIATEIMPL_H
