//===- InstanceKey.cpp - What an instance of a generic operator depends on ===//
//
// This file implements the Instantiator's memo key. An instance depends on
// far less than the exact shapes of a use: the overload chosen and the
// concrete operator built depend on the tensors' ranks, on which extents
// of the rank-polymorphic tensors (and of a known output shape) are 1 (they
// decide where broadcasting reads index 0), on the values of the `dim(T,
// K)` calls of the name's guards, bodies and extents (folded to literals),
// and on the params. The key holds exactly those, as integers in a
// canonical order, so that uses differing in any other extent (a halved
// batch) share one instance. The one check that depends on exact extents,
// that the non-1 extents of each broadcast position agree, is replayed
// from a BroadcastPlan when a use hits the memo.
//
//===----------------------------------------------------------------------===//

#include "InstantiateImpl.h"

#include "tofu/TDL/ExprWalk.h"

#include <algorithm>
#include <cstring>

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

/// Calls `fn` on every `dim(T, K)` call of `op`: its guard, body and the
/// extents of its index variables.
static void forEachDimQuery(const OpDecl &op,
                            llvm::function_ref<void(const CallExpr &)> fn) {
  auto visit = [&](const Expr &e) {
    if (auto *call = dyn_cast<CallExpr>(&e))
      if (call->getBuiltin() == Builtin::Dim)
        fn(*call);
  };
  if (op.getGuard())
    walkExpr(*op.getGuard(), visit);
  walkExpr(op.getBody(), visit);
  for (const IndexVarDecl *var : op.getIndexVars())
    if (const Expr *extent = var->getExtentExpr())
      walkExpr(*extent, visit);
}

NameDeps detail::computeNameDeps(ArrayRef<const OpDecl *> overloads,
                                 unsigned id) {
  NameDeps deps;
  deps.id = id;
  for (const OpDecl *op : overloads) {
    for (const auto &param : op->getParams())
      deps.paramNames.push_back(param->getName());
    for (const auto &tensor : op->getTensors()) {
      unsigned pos = tensor->getPosition();
      if (deps.polymorphic.size() <= pos)
        deps.polymorphic.resize(pos + 1, false);
      if (tensor->isRankPolymorphic())
        deps.polymorphic[pos] = true;
    }
    forEachDimQuery(*op, [&](const CallExpr &call) {
      StringRef name = cast<NameExpr>(call.getArg(0)).getName();
      deps.dimQueries.push_back(
          {op->lookupTensor(name)->getPosition(), getDimQueryArg(call)});
    });
  }
  llvm::sort(deps.paramNames);
  deps.paramNames.erase(std::unique(deps.paramNames.begin(),
                                    deps.paramNames.end()),
                        deps.paramNames.end());
  llvm::sort(deps.dimQueries);
  deps.dimQueries.erase(std::unique(deps.dimQueries.begin(),
                                    deps.dimQueries.end()),
                        deps.dimQueries.end());
  return deps;
}

/// Appends a shape's rank and which extents are 1 (all extents beyond 62
/// dimensions).
static void encodeOnes(ArrayRef<int64_t> shape, SmallVectorImpl<int64_t> &key) {
  key.push_back(shape.size());
  if (shape.size() > 62) {
    key.append(shape.begin(), shape.end());
    return;
  }
  int64_t ones = 0;
  for (unsigned d = 0, e = shape.size(); d != e; ++d)
    ones |= int64_t(shape[d] == 1) << d;
  key.push_back(ones);
}

bool detail::encodeKey(const NameDeps &deps, const Use &use,
                       SmallVectorImpl<int64_t> &key) {
  key.clear();
  key.push_back(deps.id);
  key.push_back(use.inputShapes.size());
  for (unsigned t = 0, e = use.inputShapes.size(); t != e; ++t) {
    ArrayRef<int64_t> shape = use.inputShapes[t];
    if (t < deps.polymorphic.size() && deps.polymorphic[t])
      encodeOnes(shape, key);
    else
      key.push_back(shape.size());
  }
  key.push_back(use.outputRank ? int64_t(*use.outputRank) : -1);
  // A known output shape takes part in broadcasting (instantiateForOutput).
  key.push_back(use.outputShape.empty() ? 0 : 1);
  if (!use.outputShape.empty())
    encodeOnes(use.outputShape, key);
  // Params by their index among the name's param names; a name no overload
  // has matches nothing and is not memoized.
  size_t paramsStart = key.size();
  for (const auto &[name, value] : use.params) {
    auto it = llvm::lower_bound(deps.paramNames, name);
    if (it == deps.paramNames.end() || *it != name)
      return false;
    int64_t bits = value.intValue;
    if (value.isReal)
      std::memcpy(&bits, &value.realValue, sizeof bits);
    key.push_back(it - deps.paramNames.begin());
    key.push_back(value.isReal);
    key.push_back(bits);
  }
  // Canonical order: by param index (triples sorted by their first word).
  size_t numParams = (key.size() - paramsStart) / 3;
  for (size_t i = 1; i < numParams; ++i)
    for (size_t j = i; j > 0; --j) {
      int64_t *a = &key[paramsStart + 3 * (j - 1)], *b = a + 3;
      if (a[0] <= b[0])
        break;
      std::swap_ranges(a, a + 3, b);
    }
  key.push_back(numParams);
  for (const auto &[tensor, k] : deps.dimQueries) {
    if (tensor >= use.inputShapes.size()) {
      key.push_back(-2);
      continue;
    }
    ArrayRef<int64_t> shape = use.inputShapes[tensor];
    int64_t rank = shape.size(), d = k < 0 ? k + rank : k;
    key.push_back(d >= 0 && d < rank ? shape[d] : -1);
  }
  return true;
}

bool detail::isBroadcastCompatible(const BroadcastPlan &plan, const Use &use) {
  for (unsigned pos = 0; pos != plan.length; ++pos) {
    bool fromOutput = !use.outputShape.empty();
    int64_t common = fromOutput ? use.outputShape[plan.outputFirst + pos] : 1;
    for (const BroadcastPlan::Read &read : plan.reads) {
      if (pos + read.count < plan.length)
        continue;
      int64_t extent =
          use.inputShapes[read.tensor][read.firstDim + pos + read.count -
                                       plan.length];
      if (extent == 1 || extent == common)
        continue;
      if (common != 1 || fromOutput)
        return false;
      common = extent;
    }
  }
  return true;
}
