//===- Sema.cpp - Semantic checks of TDL operators ------------------------===//
//
// This file implements checkModule and checkOp: name resolution, tensor
// ranks, index variable numbering and extents, value types, and index
// classification. Each operator is checked independently by an OpChecker;
// errors are reported and checking continues so that one run shows them
// all. Generic operators (ellipsis, guard, dim/rank; SemaGeneric.cpp) are
// checked as far as their generic form allows; the Instantiator checks
// each concrete instance again.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Sema.h"

#include "OpChecker.h"

#include "tofu/TDL/ExprWalk.h"

using namespace tofu;
using namespace tofu::tdl;
using namespace tofu::tdl::detail;

void OpChecker::check() {
  unsigned errorsBefore = diags.getNumErrors();
  declareNames();
  std::vector<const IndexVarDecl *> vars;
  declareOutputVars(vars);
  numberVars(op.getBody(), vars);
  op.setIndexVars(std::move(vars));
  if (op.getGuard())
    checkGuard(*op.getGuard());
  checkExpr(op.getBody());
  op.setGeneric(op.getEllipsisVar() || op.getGuard() || sawShapeQuery);
  // An unread tensor is worth a warning only in an otherwise correct,
  // concrete op (a generic one may use a tensor only in `rank(T)`).
  if (diags.getNumErrors() == errorsBefore && !op.isGeneric())
    warnUnreadTensors();
}

/// Numbers the output variables, resolves their extents (the output
/// dimension, or an explicit `z < 1`) and checks that there is at most one
/// ellipsis variable.
void OpChecker::declareOutputVars(std::vector<const IndexVarDecl *> &vars) {
  const IndexVarDecl *ellipsis = nullptr;
  for (const auto &v : op.getOutputVars()) {
    IndexVarDecl &var = *v;
    var.setId(vars.size());
    if (var.isEllipsis()) {
      if (ellipsis) {
        diags.error(var.getLoc(), "an output lambda may have only one "
                                  "ellipsis variable");
        diags.note(ellipsis->getLoc(), "'..." + ellipsis->getName() +
                                           "' is declared here");
      }
      ellipsis = &var;
    }
    Extent extent;
    extent.kind = Extent::Kind::OutputDim;
    extent.dim = vars.size();
    var.setExtent(extent);
    if (var.getExtentExpr())
      checkExplicitExtent(var);
    vars.push_back(&var);
    scope.push_back(&var);
  }
}

bool OpChecker::declare(StringRef name, SMLoc loc) {
  auto [it, inserted] = declared.try_emplace(name, loc);
  if (inserted)
    return true;
  diags.error(loc, "duplicate name '" + name + "' in operator '" +
                       op.getName() + "'");
  diags.note(it->second, "previously declared here");
  return false;
}

void OpChecker::declareNames() {
  for (const auto &p : op.getParams())
    declare(p->getName(), p->getLoc());
  for (const auto &t : op.getTensors())
    declare(t->getName(), t->getLoc());
  for (const auto &v : op.getOutputVars())
    declare(v->getName(), v->getLoc());
}

/// Numbers the reduction variables in source (pre-)order, declares their
/// names and links them to their reduction.
void OpChecker::numberVars(Expr &body,
                           std::vector<const IndexVarDecl *> &vars) {
  walkExpr(body, [&](const Expr &e) {
    auto *red = dyn_cast<ReduceExpr>(&e);
    if (!red)
      return;
    for (const auto &v : red->getVars()) {
      IndexVarDecl &var = *v;
      if (var.isEllipsis())
        diags.error(var.getLoc(), "an ellipsis variable is not allowed in a "
                                  "reduction lambda");
      var.setId(vars.size());
      var.setReduction(red);
      vars.push_back(&var);
      if (declare(var.getName(), var.getLoc()))
        allReductionVars[var.getName()] = &var;
    }
  });
}

const IndexVarDecl *OpChecker::lookupVisibleVar(StringRef name) const {
  for (auto it = scope.rbegin(), e = scope.rend(); it != e; ++it)
    if ((*it)->getName() == name)
      return *it;
  return nullptr;
}

void OpChecker::checkExpr(Expr &e) {
  if (diags.shouldStop())
    return;
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    e.setType(ValueType::Int);
    return;
  case Expr::Kind::FloatLiteral:
    e.setType(ValueType::Real);
    return;
  case Expr::Kind::Name:
    return checkName(cast<NameExpr>(e));
  case Expr::Kind::TensorRead:
    return checkTensorRead(cast<TensorReadExpr>(e));
  case Expr::Kind::Call:
    return checkCall(cast<CallExpr>(e));
  case Expr::Kind::Reduce:
    return checkReduce(cast<ReduceExpr>(e));
  case Expr::Kind::Unary:
    return checkUnary(cast<UnaryExpr>(e));
  case Expr::Kind::Binary:
    return checkBinary(cast<BinaryExpr>(e));
  }
}

void OpChecker::checkName(NameExpr &e) {
  e.setType(ValueType::Int);
  StringRef name = e.getName();
  if (const ParamDecl *param = op.lookupParam(name)) {
    e.resolve(param);
    if (param->isReal())
      e.setType(ValueType::Real);
    return;
  }
  if (inGuard) {
    diags.error(e.getLoc(), "a guard may use only params, integer literals, "
                            "rank(T) and dim(T, K), not '" + name + "'");
    return;
  }
  if (inExtent) {
    diags.error(e.getLoc(), Twine("the extent of ") +
                                (inOutputExtent ? "an output" : "a reduction") +
                                " variable may use only constants and params, "
                                "not '" + name + "'");
    return;
  }
  if (const IndexVarDecl *var = lookupVisibleVar(name)) {
    if (var->isEllipsis()) {
      diags.error(e.getLoc(), "the ellipsis variable '" + name +
                                  "' can be used only as '..." + name +
                                  "', an index of a tensor read");
      return;
    }
    e.resolve(var);
    if (var->isReduction()) {
      ReductionVarUses &u = uses[var];
      if (!u.firstUse.isValid())
        u.firstUse = e.getLoc();
    }
    return;
  }
  if (op.lookupTensor(name)) {
    diags.error(e.getLoc(), "tensor '" + name + "' must be indexed, as in '" +
                                name + "[...]'");
    return;
  }
  if (allReductionVars.count(name)) {
    diags.error(e.getLoc(), "index variable '" + name +
                                "' is used outside the reduction that binds it");
    return;
  }
  // Inside `opaque(...)` an unknown name is a free index: the whole
  // dimension.
  if (inOpaque)
    return;
  diags.error(e.getLoc(), "unknown index variable or param '" + name + "'");
}

void OpChecker::reportFloatIndex(const Expr &index) {
  if (auto *lit = dyn_cast<FloatLiteralExpr>(&index)) {
    diags.error(lit->getLoc(), "a tensor index must be an integer expression, "
                               "not a floating-point literal");
    return;
  }
  if (auto *un = dyn_cast<UnaryExpr>(&index))
    return reportFloatIndex(un->getOperand());
  if (auto *bin = dyn_cast<BinaryExpr>(&index)) {
    reportFloatIndex(bin->getLHS());
    reportFloatIndex(bin->getRHS());
  }
}

void OpChecker::checkTensorRead(TensorReadExpr &e) {
  e.setType(ValueType::Real);
  StringRef name = e.getTensorName();
  if (inGuard) {
    diags.error(e.getLoc(), "a guard cannot read tensors; use rank(" + name +
                                ") or dim(" + name + ", K)");
    return;
  }
  unsigned numEllipses = 0;
  for (unsigned i = 0, n = e.getNumIndices(); i != n; ++i) {
    auto *ellipsis = dyn_cast<NameExpr>(&e.getIndex(i));
    if (ellipsis && ellipsis->isEllipsis())
      numEllipses += checkEllipsisIndex(e, *ellipsis);
    else
      checkExpr(e.getIndex(i));
  }

  TensorDecl *tensor = op.lookupTensor(name);
  if (!tensor) {
    if (op.lookupParam(name) || lookupVisibleVar(name) ||
        allReductionVars.count(name))
      diags.error(e.getLoc(), "'" + name + "' is not a tensor");
    else
      diags.error(e.getLoc(), "unknown tensor '" + name + "'");
    return;
  }
  e.setTensor(tensor);
  fixRank(e, *tensor, numEllipses);

  std::vector<IndexKind> kinds;
  for (unsigned i = 0, n = e.getNumIndices(); i != n; ++i) {
    const Expr &index = e.getIndex(i);
    reportFloatIndex(index);
    reportRealParams(index, "a tensor index");
    kinds.push_back(classifyIndex(index));
    // A reduction variable indexing a dimension by itself gets its extent.
    if (auto *nameExpr = dyn_cast<NameExpr>(&index))
      if (const IndexVarDecl *var = nameExpr->getIndexVar())
        if (var->isReduction() && !uses[var].tensor) {
          uses[var].tensor = tensor;
          uses[var].dim = i;
        }
  }
  e.setIndexKinds(std::move(kinds));
}

void OpChecker::checkCall(CallExpr &e) {
  llvm::Optional<Builtin> builtin = lookupBuiltin(e.getCallee());
  bool special = builtin == Builtin::Dim || builtin == Builtin::Rank ||
                 builtin == Builtin::Opaque;
  if (!special)
    for (unsigned i = 0, n = e.getNumArgs(); i != n; ++i)
      checkExpr(e.getArg(i));
  if (!builtin) {
    diags.error(e.getLoc(), "unknown function '" + e.getCallee() + "'");
    e.setType(ValueType::Real);
    return;
  }
  unsigned arity = getBuiltinArity(*builtin);
  if (arity != VariadicArity && e.getNumArgs() != arity) {
    diags.error(e.getLoc(), "'" + e.getCallee() + "' takes " + Twine(arity) +
                                (arity == 1 ? " argument" : " arguments") +
                                " but " + Twine(e.getNumArgs()) +
                                (e.getNumArgs() == 1 ? " was" : " were") +
                                " given");
    e.setType(ValueType::Real);
    return;
  }
  if (special) {
    bool ok = *builtin == Builtin::Opaque ? checkOpaque(e)
                                          : checkShapeQuery(e, *builtin);
    if (ok)
      e.setBuiltin(*builtin);
    return;
  }
  e.setBuiltin(*builtin);
  auto allInt = [&](unsigned from) {
    for (unsigned i = from; i != arity; ++i)
      if (e.getArg(i).getType() != ValueType::Int &&
          e.getArg(i).getType() != ValueType::Bool)
        return false;
    return true;
  };
  switch (*builtin) {
  case Builtin::Abs:
  case Builtin::Max:
  case Builtin::Min:
    e.setType(allInt(0) ? ValueType::Int : ValueType::Real);
    return;
  case Builtin::Select:
    e.setType(allInt(1) ? ValueType::Int : ValueType::Real);
    return;
  default:
    e.setType(ValueType::Real);
    return;
  }
}

void OpChecker::checkExplicitExtent(IndexVarDecl &var) {
  Expr &extent = *var.getExtentExpr();
  unsigned errorsBefore = diags.getNumErrors();
  inExtent = true;
  inOutputExtent = var.isOutput();
  checkExpr(extent);
  inExtent = false;
  if (diags.getNumErrors() != errorsBefore)
    return;
  reportRealParams(extent, "the extent of '" + var.getName() + "'");
  if (diags.getNumErrors() != errorsBefore)
    return;
  if (!isConstantExpr(extent) || extent.getType() != ValueType::Int)
    diags.error(extent.getLoc(),
                "the extent of '" + var.getName() +
                    "' must be an integer constant or an expression of params");
  if (auto *lit = dyn_cast<IntLiteralExpr>(&extent))
    if (lit->getValue() <= 0)
      diags.error(extent.getLoc(), "the extent of '" + var.getName() +
                                       "' must be positive");
  Extent resolved;
  resolved.kind = Extent::Kind::Explicit;
  resolved.dim = var.isOutput() ? var.getId() : 0;
  var.setExtent(resolved);
}

void OpChecker::resolveReductionExtent(IndexVarDecl &var) {
  // An ellipsis reduction variable was reported already.
  if (var.getExtentExpr() || var.isEllipsis())
    return;
  auto it = uses.find(&var);
  if (it != uses.end() && it->second.tensor) {
    Extent extent;
    extent.kind = Extent::Kind::TensorDim;
    extent.tensor = it->second.tensor;
    extent.dim = it->second.dim;
    var.setExtent(extent);
    return;
  }
  bool used = it != uses.end() && it->second.firstUse.isValid();
  diags.error(used ? it->second.firstUse : var.getLoc(),
              "cannot infer the extent of reduction variable '" +
                  var.getName() + "': give it explicitly ('" + var.getName() +
                  " < N') or use it alone as the index of a tensor dimension");
  if (used)
    diags.note(var.getLoc(), "'" + var.getName() + "' is declared here");
}

void OpChecker::checkReduce(ReduceExpr &e) {
  if (inGuard) {
    diags.error(e.getLoc(), "a guard cannot contain a reduction");
    return;
  }
  for (const auto &v : e.getVars())
    if (v->getExtentExpr())
      checkExplicitExtent(*v);
  size_t scopeSize = scope.size();
  for (const auto &v : e.getVars())
    scope.push_back(v.get());
  checkExpr(e.getBody());
  scope.resize(scopeSize);
  for (const auto &v : e.getVars())
    resolveReductionExtent(*v);
  ValueType bodyType = e.getBody().getType();
  e.setType(bodyType == ValueType::Bool ? ValueType::Int : bodyType);
}

void OpChecker::checkUnary(UnaryExpr &e) {
  checkExpr(e.getOperand());
  if (e.getOp() == UnaryOp::Not)
    e.setType(ValueType::Bool);
  else
    e.setType(e.getOperand().getType() == ValueType::Real ? ValueType::Real
                                                          : ValueType::Int);
}

void OpChecker::checkBinary(BinaryExpr &e) {
  checkExpr(e.getLHS());
  checkExpr(e.getRHS());
  switch (e.getOp()) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    bool real = e.getLHS().getType() == ValueType::Real ||
                e.getRHS().getType() == ValueType::Real;
    e.setType(real ? ValueType::Real : ValueType::Int);
    if (auto *lit = dyn_cast<IntLiteralExpr>(&e.getRHS()))
      if (!real && lit->getValue() == 0 &&
          (e.getOp() == BinaryOp::Div || e.getOp() == BinaryOp::Rem))
        diags.error(e.getLoc(), "integer division by zero");
    return;
  }
  default:
    e.setType(ValueType::Bool);
    return;
  }
}

void OpChecker::warnUnreadTensors() {
  for (const auto &t : op.getTensors())
    if (t->getRank() < 0)
      diags.warning(t->getLoc(), "tensor '" + t->getName() +
                                     "' is never read; its rank is unknown");
}

/// True if `a` and `b` have the same set of param names.
static bool haveSameParamNames(const OpDecl &a, const OpDecl &b) {
  if (a.getParams().size() != b.getParams().size())
    return false;
  return llvm::all_of(a.getParams(), [&](const auto &p) {
    return b.lookupParam(p->getName()) != nullptr;
  });
}

/// The earlier operator that `op` duplicates: same name, same param names,
/// and neither has a guard. Null if `op` is a legal overload.
static const OpDecl *findDuplicate(const Module &module, const OpDecl &op) {
  for (const OpDecl *prev : module.lookupOverloads(op.getName())) {
    if (prev == &op)
      return nullptr;
    if (!prev->getGuard() && !op.getGuard() && haveSameParamNames(*prev, op))
      return prev;
  }
  return nullptr;
}

bool tdl::checkOp(OpDecl &op, DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.getNumErrors();
  OpChecker(op, diags).check();
  return diags.getNumErrors() == errorsBefore;
}

bool tdl::checkModule(Module &module, DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.getNumErrors();
  for (const auto &op : module.getOps()) {
    if (diags.shouldStop())
      break;
    if (const OpDecl *prev = findDuplicate(module, *op)) {
      diags.error(op->getLoc(), "duplicate operator '" + op->getName() + "'");
      diags.note(prev->getLoc(), "previously defined here");
      continue;
    }
    OpChecker(*op, diags).check();
  }
  return diags.getNumErrors() == errorsBefore;
}

