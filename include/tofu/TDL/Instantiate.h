//===- Instantiate.h - Concrete operators from generic ones -----*- C++ -*-===//
//
// This file declares the Instantiator, which turns a use of an operator
// (its name, input shapes, named param values and maybe the output rank)
// into a concrete operator: the overload is picked, ellipsis variables are
// expanded to named variables `i0, i1, ...` with NumPy broadcasting, the
// guard is dropped, `dim`/`rank` are folded to literals, and the result is
// checked by Sema. Concrete operators print, analyse and evaluate like
// hand-written ones. Plain (non-generic) operators come back as themselves.
// Results are memoized on what an instance depends on, not on the exact
// shapes: the ranks, which extents broadcast (1 or not), the values of the
// `dim()` calls folded into the instance, the outcomes of the guards' `dim()`
// comparisons, and the params. Uses that differ only in other extents (a
// planner halving the batch) share one instance.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_INSTANTIATE_H
#define TOFU_TDL_INSTANTIATE_H

#include "tofu/Support/Shape.h"
#include "tofu/TDL/AST.h"
#include "tofu/TDL/ParamValue.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace tofu {
namespace tdl {
namespace detail {
struct Use;
struct NameDeps;
struct MemoEntry;
} // namespace detail

/// A concrete operator: no ellipsis, no guard, dim()/rank() folded, checked
/// by Sema. Params stay params (by position: values in `params`).
struct Instance {
  /// Owned by the Instantiator (or the library for a plain operator).
  const OpDecl *op = nullptr;
  /// The library overload it was made from (`op` itself if plain).
  const OpDecl *generic = nullptr;
  /// In op->getParams() order.
  SmallVector<ParamValue, 4> params;
  /// The same, as integers (reals as 0), for analysis::Binding.
  SmallVector<int64_t, 4> intParams;
};

/// Picks overloads and makes concrete instances of a checked library. Not
/// thread-safe; instances live as long as the Instantiator, the library as
/// long as both.
class Instantiator {
public:
  /// Uses the operators of `library`, which must have passed checkModule.
  explicit Instantiator(const Module &library);
  /// Uses the operators of several modules; overloads are tried module by
  /// module, each in source order.
  explicit Instantiator(ArrayRef<const Module *> libraries);
  ~Instantiator();

  /// Instantiates operator `opName` for inputs of `inputShapes` (by tensor
  /// position), params by name, and the output rank if known (a graph
  /// knows it; it fixes the ellipsis length). Memoized (see above). Fails
  /// with a message naming the operator and, when no overload matches,
  /// saying why each was rejected.
  llvm::Expected<const Instance *>
  instantiate(StringRef opName, ArrayRef<Shape> inputShapes,
              ArrayRef<NamedParamValue> params,
              llvm::Optional<unsigned> outputRank = llvm::None);

  /// As above, with the whole output shape known (a graph knows it): its
  /// extents take part in broadcasting, so `lambda ...i: x[...i]` reads a
  /// 1x3 `x` at row 0 for a 4x3 output. Memoized separately.
  llvm::Expected<const Instance *>
  instantiateForOutput(StringRef opName, ArrayRef<Shape> inputShapes,
                       ArrayRef<NamedParamValue> params,
                       ArrayRef<int64_t> outputShape);

  /// Number of memoized instances.
  unsigned getNumInstances() const { return memo.size(); }

private:
  ArrayRef<const OpDecl *>
  lookupOverloads(StringRef name, SmallVectorImpl<const OpDecl *> &buf) const;
  llvm::Expected<std::unique_ptr<detail::MemoEntry>>
  resolve(const detail::Use &use);
  llvm::Expected<const Instance *> lookupOrResolve(const detail::Use &use);
  const detail::NameDeps *getNameDeps(StringRef name);

  SmallVector<const Module *, 4> libraries;
  /// Per operator name, what its instances depend on (null if undefined).
  llvm::StringMap<std::unique_ptr<detail::NameDeps>> nameDeps;
  /// Keys (encodeKey's integers, stored in keyStorage) to instances.
  llvm::DenseMap<ArrayRef<int64_t>, std::unique_ptr<detail::MemoEntry>> memo;
  llvm::BumpPtrAllocator keyStorage;
  /// The key being looked up, reused so that a hit allocates nothing.
  SmallVector<int64_t, 32> scratchKey;
  /// Instances of uses that could not be keyed (kept for their lifetime).
  std::vector<std::unique_ptr<detail::MemoEntry>> unmemoized;
  std::vector<std::unique_ptr<OpDecl>> ownedOps;
};

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_INSTANTIATE_H
