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

/// What the instances of one operator name depend on beyond ranks and
/// params, from all its overloads (computed once per name).
struct NameDeps {
  /// Distinguishes names in the key.
  unsigned id = 0;
  /// The param names of every overload, sorted, unique.
  SmallVector<StringRef, 4> paramNames;
  /// (tensor position, K) of every `dim(T, K)` in a guard, body or extent,
  /// sorted, unique.
  SmallVector<std::pair<unsigned, int64_t>, 4> dimQueries;
  /// By dimQueries index: its value is part of the key (a body or an
  /// extent folds it, or a guard uses it other than in a comparison).
  SmallVector<bool, 4> valueNeeded;
  /// `dim(T, K) == X` or `!=` in a guard, X another dim(), an int param, a
  /// literal or a rank: the key holds whether they are equal.
  struct Comparison {
    enum class Kind { Dim, Param, Literal, Rank };
    /// The dimQueries index of the dim().
    unsigned query = 0;
    Kind kind = Kind::Literal;
    /// A dimQueries index, a paramNames index, the literal, or a tensor
    /// position.
    int64_t operand = 0;
  };
  SmallVector<Comparison, 4> comparisons;
  /// By tensor position: rank polymorphic in some overload.
  SmallVector<bool, 4> polymorphic;
};

NameDeps computeNameDeps(ArrayRef<const OpDecl *> overloads, unsigned id);

/// Fills `key` with what an instance for `use` depends on: the name, ranks,
/// which extents of rank-polymorphic tensors and of a known output shape
/// are 1, the output rank, the params in canonical order, the values of
/// the `dim()` calls folded into bodies and extents, and the outcome of the
/// guards' comparisons of the others. False if a param name is unknown to every
/// overload (the use fails; it is not memoized).
bool encodeKey(const NameDeps &deps, const Use &use,
               SmallVectorImpl<int64_t> &key);

/// Where each rank-polymorphic read of an instance put its ellipsis
/// positions: enough to check, for another use with the same key, that the
/// extents other than 1 at each position agree.
struct BroadcastPlan {
  struct Read {
    unsigned tensor;
    /// The tensor's dimension of its first ellipsis position.
    unsigned firstDim;
    /// How many (the last `count` positions of the ellipsis).
    unsigned count;
  };
  /// The ellipsis length (0: nothing to check).
  unsigned length = 0;
  /// The output dimension of the first ellipsis position.
  unsigned outputFirst = 0;
  SmallVector<Read, 4> reads;
};

/// True if `use` broadcasts as the instance that `plan` describes assumes
/// (buildInstanceOp's broadcast error would not fire).
bool isBroadcastCompatible(const BroadcastPlan &plan, const Use &use);

/// Evaluates an integer expression over int params (values by position),
/// literals, `rank(T)` and `dim(T, K)`: a guard or an index constant.
/// Comparisons and `&& || !` give 0 or 1. None, with `why` set, if it
/// cannot be evaluated (division by zero, `dim` out of range, a name that
/// is not a param).
llvm::Optional<int64_t> evaluateShapeExpr(const Expr &e, const OpDecl &op,
                                          ArrayRef<ParamValue> params,
                                          ArrayRef<Shape> shapes,
                                          std::string &why);

/// K of a checked `dim(T, K)` call (a literal, maybe negated).
int64_t getDimQueryArg(const CallExpr &call);

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
/// which it matches, and describes its broadcasting in `plan`.
llvm::Expected<std::unique_ptr<OpDecl>>
buildInstanceOp(const OpDecl &op, const Use &use, BroadcastPlan &plan);

} // namespace detail
} // namespace tdl
} // namespace tofu

#endif // TOFU_LIB_TDL_INSTANTIATEIMPL_H
