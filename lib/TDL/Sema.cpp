//===- Sema.cpp - Semantic checks of TDL operators ------------------------===//
//
// This file implements checkModule: name resolution, tensor ranks, index
// variable numbering and extents, value types, and index classification.
// Each operator is checked independently by an OpChecker; errors are
// reported and checking continues so that one run shows them all.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Sema.h"

#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::tdl;

namespace {

/// True if `e` has no index variable and no tensor read: an integer
/// constant or an expression over params.
bool isConstant(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::FloatLiteral:
    return true;
  case Expr::Kind::Name:
    return cast<NameExpr>(e).getParam() != nullptr;
  case Expr::Kind::Unary:
    return isConstant(cast<UnaryExpr>(e).getOperand());
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    return isConstant(bin.getLHS()) && isConstant(bin.getRHS());
  }
  case Expr::Kind::Call:
    return llvm::all_of(cast<CallExpr>(e).getArgs(),
                        [](const ExprPtr &arg) { return isConstant(*arg); });
  case Expr::Kind::TensorRead:
  case Expr::Kind::Reduce:
    return false;
  }
  return false;
}

/// The less exact of two index kinds: Affine < DivMod < Opaque <
/// DataDependent.
IndexKind join(IndexKind a, IndexKind b) {
  auto rank = [](IndexKind k) {
    switch (k) {
    case IndexKind::Affine: return 0;
    case IndexKind::DivMod: return 1;
    case IndexKind::Opaque: return 2;
    case IndexKind::DataDependent: return 3;
    }
    return 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

/// Classifies a resolved index expression (see IndexKind).
IndexKind classifyIndex(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
  case Expr::Kind::Name:
    return IndexKind::Affine;
  case Expr::Kind::FloatLiteral:
    return IndexKind::Opaque;
  case Expr::Kind::TensorRead:
    return IndexKind::DataDependent;
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    IndexKind operand = classifyIndex(un.getOperand());
    return un.getOp() == UnaryOp::Neg ? operand
                                      : join(operand, IndexKind::Opaque);
  }
  case Expr::Kind::Binary: {
    const auto &bin = cast<BinaryExpr>(e);
    IndexKind operands =
        join(classifyIndex(bin.getLHS()), classifyIndex(bin.getRHS()));
    bool lhsConst = isConstant(bin.getLHS());
    bool rhsConst = isConstant(bin.getRHS());
    switch (bin.getOp()) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return operands;
    case BinaryOp::Mul:
      return lhsConst || rhsConst ? operands
                                  : join(operands, IndexKind::Opaque);
    case BinaryOp::Div:
    case BinaryOp::Rem: {
      if (lhsConst && rhsConst)
        return IndexKind::Affine;
      auto *lit = dyn_cast<IntLiteralExpr>(&bin.getRHS());
      bool positiveConstant = rhsConst && (!lit || lit->getValue() > 0);
      return join(operands,
                  positiveConstant ? IndexKind::DivMod : IndexKind::Opaque);
    }
    default:
      return join(operands, IndexKind::Opaque);
    }
  }
  case Expr::Kind::Call: {
    IndexKind kind = IndexKind::Opaque;
    for (const ExprPtr &arg : cast<CallExpr>(e).getArgs())
      kind = join(kind, classifyIndex(*arg));
    return kind;
  }
  case Expr::Kind::Reduce:
    return join(IndexKind::Opaque, classifyIndex(cast<ReduceExpr>(e).getBody()));
  }
  return IndexKind::Opaque;
}

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
  void numberVars(Expr &e, std::vector<const IndexVarDecl *> &vars);

  /// Resolves, types and classifies `e`, with `scope` the index variables
  /// visible there.
  void checkExpr(Expr &e);
  void checkName(NameExpr &e);
  void checkTensorRead(TensorReadExpr &e);
  void checkCall(CallExpr &e);
  void checkReduce(ReduceExpr &e);
  void checkUnary(UnaryExpr &e);
  void checkBinary(BinaryExpr &e);
  void checkExplicitExtent(IndexVarDecl &var);
  void resolveReductionExtent(IndexVarDecl &var);
  void reportFloatIndex(const Expr &index);
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
};

} // namespace

void OpChecker::check() {
  unsigned errorsBefore = diags.getNumErrors();
  declareNames();
  std::vector<const IndexVarDecl *> vars;
  for (const auto &v : op.getOutputVars()) {
    IndexVarDecl &var = *v;
    var.setId(vars.size());
    Extent extent;
    extent.kind = Extent::Kind::OutputDim;
    extent.dim = vars.size();
    var.setExtent(extent);
    vars.push_back(&var);
    scope.push_back(&var);
  }
  numberVars(op.getBody(), vars);
  op.setIndexVars(std::move(vars));
  checkExpr(op.getBody());
  // An unread tensor is worth a warning only in an otherwise correct op.
  if (diags.getNumErrors() == errorsBefore)
    warnUnreadTensors();
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
    return;
  }
  if (inExtent) {
    diags.error(e.getLoc(), "the extent of a reduction variable may use only "
                            "constants and params, not '" + name + "'");
    return;
  }
  if (const IndexVarDecl *var = lookupVisibleVar(name)) {
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
  for (unsigned i = 0, n = e.getNumIndices(); i != n; ++i)
    checkExpr(e.getIndex(i));

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
  int rank = e.getNumIndices();
  if (tensor->getRank() < 0) {
    tensor->setRank(rank, e.getLoc());
  } else if (tensor->getRank() != rank) {
    diags.error(e.getLoc(), "wrong number of indices for tensor '" + name +
                                "': " + Twine(rank) + " here, but " +
                                Twine(tensor->getRank()) + " elsewhere");
    diags.note(tensor->getRankLoc(), "'" + name + "' first read with " +
                                         Twine(tensor->getRank()) +
                                         " indices here");
  }

  std::vector<IndexKind> kinds;
  for (unsigned i = 0, n = e.getNumIndices(); i != n; ++i) {
    const Expr &index = e.getIndex(i);
    reportFloatIndex(index);
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
  for (unsigned i = 0, n = e.getNumArgs(); i != n; ++i)
    checkExpr(e.getArg(i));
  llvm::Optional<Builtin> builtin = lookupBuiltin(e.getCallee());
  if (!builtin) {
    diags.error(e.getLoc(), "unknown function '" + e.getCallee() + "'");
    e.setType(ValueType::Real);
    return;
  }
  unsigned arity = getBuiltinArity(*builtin);
  if (e.getNumArgs() != arity) {
    diags.error(e.getLoc(), "'" + e.getCallee() + "' takes " + Twine(arity) +
                                (arity == 1 ? " argument" : " arguments") +
                                " but " + Twine(e.getNumArgs()) +
                                (e.getNumArgs() == 1 ? " was" : " were") +
                                " given");
    e.setType(ValueType::Real);
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
  checkExpr(extent);
  inExtent = false;
  if (diags.getNumErrors() != errorsBefore)
    return;
  if (!isConstant(extent) || extent.getType() != ValueType::Int)
    diags.error(extent.getLoc(),
                "the extent of '" + var.getName() +
                    "' must be an integer constant or an expression of params");
  if (auto *lit = dyn_cast<IntLiteralExpr>(&extent))
    if (lit->getValue() <= 0)
      diags.error(extent.getLoc(), "the extent of '" + var.getName() +
                                       "' must be positive");
  Extent resolved;
  resolved.kind = Extent::Kind::Explicit;
  var.setExtent(resolved);
}

void OpChecker::resolveReductionExtent(IndexVarDecl &var) {
  if (var.getExtentExpr())
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

bool tdl::checkModule(Module &module, DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.getNumErrors();
  llvm::StringMap<SMLoc> seen;
  for (const auto &op : module.getOps()) {
    if (diags.shouldStop())
      break;
    auto [it, inserted] = seen.try_emplace(op->getName(), op->getLoc());
    if (!inserted) {
      diags.error(op->getLoc(), "duplicate operator '" + op->getName() + "'");
      diags.note(it->second, "previously defined here");
      continue;
    }
    OpChecker(*op, diags).check();
  }
  return diags.getNumErrors() == errorsBefore;
}
