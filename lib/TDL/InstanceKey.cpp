//===- InstanceKey.cpp - What an instance of a generic operator depends on ===//
//
// This file implements the Instantiator's memo key. An instance depends on
// far less than the exact shapes of a use: the overload chosen and the
// concrete operator built depend on the tensors' ranks, on which extents
// of the rank-polymorphic tensors (and of a known output shape) are 1 (they
// decide where broadcasting reads index 0), on the values of the `dim(T,
// K)` calls of the name's bodies and extents (folded to literals), on the
// outcome of each `dim(T, K) == X` a guard tests (X another dim, an int
// param, a literal or a rank; a dim used otherwise in a guard enters by
// value), and on the params. The key holds exactly those, as integers in a
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

/// Calls `fn` on every `dim(T, K)` call of `e`.
static void forEachDimCall(const Expr &e,
                           llvm::function_ref<void(const CallExpr &)> fn) {
  walkExpr(e, [&](const Expr &sub) {
    if (auto *call = dyn_cast<CallExpr>(&sub))
      if (call->getBuiltin() == Builtin::Dim)
        fn(*call);
  });
}

namespace {
/// Builds the NameDeps of one name from its overloads.
class NameDepsBuilder {
public:
  NameDepsBuilder(ArrayRef<const OpDecl *> overloads, NameDeps &deps)
      : overloads(overloads), deps(deps) {}
  void build();

private:
  std::pair<unsigned, int64_t> queryOf(const OpDecl &op, const CallExpr &call) {
    StringRef name = cast<NameExpr>(call.getArg(0)).getName();
    return {op.lookupTensor(name)->getPosition(), getDimQueryArg(call)};
  }
  unsigned indexOf(const OpDecl &op, const CallExpr &call) {
    return llvm::lower_bound(deps.dimQueries, queryOf(op, call)) -
           deps.dimQueries.begin();
  }
  bool classifyComparand(const OpDecl &op, const Expr &e,
                         NameDeps::Comparison &c);
  void addGuardComparisons(const OpDecl &op);

  ArrayRef<const OpDecl *> overloads;
  NameDeps &deps;
};
} // namespace

/// Fills the comparand of `c` from `e` if the key can hold what it is
/// compared with: another dim(), an int param, a literal or a rank.
bool NameDepsBuilder::classifyComparand(const OpDecl &op, const Expr &e,
                                        NameDeps::Comparison &c) {
  using Kind = NameDeps::Comparison::Kind;
  if (auto *lit = dyn_cast<IntLiteralExpr>(&e)) {
    c.kind = Kind::Literal;
    c.operand = lit->getValue();
    return true;
  }
  if (auto *un = dyn_cast<UnaryExpr>(&e))
    if (auto *lit = dyn_cast<IntLiteralExpr>(&un->getOperand()))
      if (un->getOp() == UnaryOp::Neg) {
        c.kind = Kind::Literal;
        c.operand = -lit->getValue();
        return true;
      }
  if (auto *name = dyn_cast<NameExpr>(&e))
    if (const ParamDecl *param = name->getParam()) {
      c.kind = Kind::Param;
      c.operand = llvm::lower_bound(deps.paramNames, param->getName()) -
                  deps.paramNames.begin();
      return true;
    }
  auto *call = dyn_cast<CallExpr>(&e);
  if (!call)
    return false;
  if (call->getBuiltin() == Builtin::Dim) {
    c.kind = Kind::Dim;
    c.operand = indexOf(op, *call);
    return true;
  }
  if (call->getBuiltin() == Builtin::Rank) {
    c.kind = Kind::Rank;
    c.operand =
        op.lookupTensor(cast<NameExpr>(call->getArg(0)).getName())->getPosition();
    return true;
  }
  return false;
}

/// Records every `dim(..) == X` and `dim(..) != X` of `op`'s guard whose
/// X the key can compare with; every other dim() of the guard needs its
/// value in the key.
void NameDepsBuilder::addGuardComparisons(const OpDecl &op) {
  SmallVector<const CallExpr *, 4> compared;
  walkExpr(*op.getGuard(), [&](const Expr &e) {
    auto *bin = dyn_cast<BinaryExpr>(&e);
    if (!bin || (bin->getOp() != BinaryOp::Eq && bin->getOp() != BinaryOp::Ne))
      return;
    for (bool lhsIsDim : {true, false}) {
      const Expr &side = lhsIsDim ? bin->getLHS() : bin->getRHS();
      const Expr &other = lhsIsDim ? bin->getRHS() : bin->getLHS();
      auto *call = dyn_cast<CallExpr>(&side);
      NameDeps::Comparison c;
      if (!call || call->getBuiltin() != Builtin::Dim ||
          !classifyComparand(op, other, c))
        continue;
      c.query = indexOf(op, *call);
      deps.comparisons.push_back(c);
      compared.push_back(call);
      if (c.kind == NameDeps::Comparison::Kind::Dim)
        compared.push_back(cast<CallExpr>(&other));
    }
  });
  forEachDimCall(*op.getGuard(), [&](const CallExpr &call) {
    if (!llvm::is_contained(compared, &call))
      deps.valueNeeded[indexOf(op, call)] = true;
  });
}

void NameDepsBuilder::build() {
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
    auto add = [&](const CallExpr &call) {
      deps.dimQueries.push_back(queryOf(*op, call));
    };
    if (op->getGuard())
      forEachDimCall(*op->getGuard(), add);
    forEachDimCall(op->getBody(), add);
    for (const IndexVarDecl *var : op->getIndexVars())
      if (const Expr *extent = var->getExtentExpr())
        forEachDimCall(*extent, add);
  }
  llvm::sort(deps.paramNames);
  deps.paramNames.erase(std::unique(deps.paramNames.begin(),
                                    deps.paramNames.end()),
                        deps.paramNames.end());
  llvm::sort(deps.dimQueries);
  deps.dimQueries.erase(std::unique(deps.dimQueries.begin(),
                                    deps.dimQueries.end()),
                        deps.dimQueries.end());
  // A dim() folded into a body or an extent needs its value; one a guard
  // only compares needs only the comparison's outcome.
  deps.valueNeeded.assign(deps.dimQueries.size(), false);
  for (const OpDecl *op : overloads) {
    auto need = [&](const CallExpr &call) {
      deps.valueNeeded[indexOf(*op, call)] = true;
    };
    forEachDimCall(op->getBody(), need);
    for (const IndexVarDecl *var : op->getIndexVars())
      if (const Expr *extent = var->getExtentExpr())
        forEachDimCall(*extent, need);
    if (op->getGuard())
      addGuardComparisons(*op);
  }
}

NameDeps detail::computeNameDeps(ArrayRef<const OpDecl *> overloads,
                                 unsigned id) {
  NameDeps deps;
  deps.id = id;
  NameDepsBuilder(overloads, deps).build();
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
  // The value of each dim() a body or extent folds; for the others, only
  // the outcome of each comparison a guard makes.
  auto dimValue = [&](unsigned query) -> int64_t {
    auto [tensor, k] = deps.dimQueries[query];
    if (tensor >= use.inputShapes.size())
      return -2;
    ArrayRef<int64_t> shape = use.inputShapes[tensor];
    int64_t rank = shape.size(), d = k < 0 ? k + rank : k;
    return d >= 0 && d < rank ? shape[d] : -1;
  };
  for (unsigned q = 0, e = deps.dimQueries.size(); q != e; ++q)
    if (deps.valueNeeded[q])
      key.push_back(dimValue(q));
  using Kind = NameDeps::Comparison::Kind;
  for (const NameDeps::Comparison &c : deps.comparisons) {
    llvm::Optional<int64_t> operand;
    switch (c.kind) {
    case Kind::Dim:
      operand = dimValue(c.operand);
      break;
    case Kind::Literal:
      operand = c.operand;
      break;
    case Kind::Rank:
      if (unsigned(c.operand) < use.inputShapes.size())
        operand = int64_t(use.inputShapes[c.operand].size());
      break;
    case Kind::Param:
      for (const auto &[name, value] : use.params)
        if (name == deps.paramNames[c.operand])
          operand = value.getAsInteger();
      break;
    }
    key.push_back(operand && *operand == dimValue(c.query));
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
