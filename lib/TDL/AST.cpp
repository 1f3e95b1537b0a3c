//===- AST.cpp - The TDL abstract syntax tree -----------------------------===//
//
// This file implements the out-of-line parts of the AST: the name tables of
// the enumerations, the builtin table and the declaration lookups.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/AST.h"

#include "llvm/Support/ErrorHandling.h"

using namespace tofu;
using namespace tofu::tdl;

StringRef tdl::getReducerName(Reducer reducer) {
  switch (reducer) {
  case Reducer::Sum:
    return "Sum";
  case Reducer::Max:
    return "Max";
  case Reducer::Min:
    return "Min";
  case Reducer::Prod:
    return "Prod";
  }
  llvm_unreachable("unknown reducer");
}

llvm::Optional<Reducer> tdl::lookupReducer(StringRef name) {
  for (Reducer r : {Reducer::Sum, Reducer::Max, Reducer::Min, Reducer::Prod})
    if (getReducerName(r) == name)
      return r;
  return llvm::None;
}

namespace {
struct BuiltinInfo {
  StringRef name;
  unsigned arity;
};
const BuiltinInfo builtinTable[] = {
#define TDL_BUILTIN(Id, Name, Arity) {Name, Arity},
#include "tofu/TDL/Builtins.def"
};
} // namespace

StringRef tdl::getBuiltinName(Builtin builtin) {
  return builtinTable[static_cast<unsigned>(builtin)].name;
}

unsigned tdl::getBuiltinArity(Builtin builtin) {
  return builtinTable[static_cast<unsigned>(builtin)].arity;
}

llvm::Optional<Builtin> tdl::lookupBuiltin(StringRef name) {
  for (unsigned i = 0, e = llvm::array_lengthof(builtinTable); i != e; ++i)
    if (builtinTable[i].name == name)
      return static_cast<Builtin>(i);
  return llvm::None;
}

StringRef tdl::getUnaryOpSpelling(UnaryOp op) {
  return op == UnaryOp::Neg ? "-" : "!";
}

StringRef tdl::getBinaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  }
  llvm_unreachable("unknown binary operator");
}

unsigned tdl::getBinaryOpPrecedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return 1;
  case BinaryOp::And:
    return 2;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return 3;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return 4;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem:
    return 5;
  }
  llvm_unreachable("unknown binary operator");
}

StringRef tdl::getValueTypeName(ValueType type) {
  switch (type) {
  case ValueType::Unknown: return "unknown";
  case ValueType::Int: return "int";
  case ValueType::Real: return "real";
  case ValueType::Bool: return "bool";
  }
  llvm_unreachable("unknown value type");
}

StringRef tdl::getIndexKindName(IndexKind kind) {
  switch (kind) {
  case IndexKind::Affine: return "affine";
  case IndexKind::DivMod: return "divmod";
  case IndexKind::DataDependent: return "data-dependent";
  case IndexKind::Opaque: return "opaque";
  }
  llvm_unreachable("unknown index kind");
}

Expr::~Expr() = default;

IndexVarDecl::IndexVarDecl(std::string name, SMLoc loc, Role role,
                           ExprPtr extentExpr, bool ellipsis)
    : name(std::move(name)), loc(loc), role(role),
      extentExpr(std::move(extentExpr)), ellipsis(ellipsis) {}

IndexVarDecl::~IndexVarDecl() = default;

OpDecl::OpDecl(std::string name, SMLoc loc,
               std::vector<std::unique_ptr<ParamDecl>> params,
               std::vector<std::unique_ptr<TensorDecl>> tensors,
               IndexVarList outputVars, ExprPtr body, ExprPtr guard)
    : name(std::move(name)), loc(loc), params(std::move(params)),
      tensors(std::move(tensors)), outputVars(std::move(outputVars)),
      body(std::move(body)), guard(std::move(guard)) {}

const IndexVarDecl *OpDecl::getEllipsisVar() const {
  for (const auto &v : outputVars)
    if (v->isEllipsis())
      return v.get();
  return nullptr;
}

bool OpDecl::isOpaque() const {
  auto *call = dyn_cast<CallExpr>(body.get());
  return call && call->getBuiltin() == Builtin::Opaque;
}

const TensorDecl *OpDecl::lookupTensor(StringRef name) const {
  for (const auto &t : tensors)
    if (t->getName() == name)
      return t.get();
  return nullptr;
}

TensorDecl *OpDecl::lookupTensor(StringRef name) {
  return const_cast<TensorDecl *>(
      static_cast<const OpDecl *>(this)->lookupTensor(name));
}

const ParamDecl *OpDecl::lookupParam(StringRef name) const {
  for (const auto &p : params)
    if (p->getName() == name)
      return p.get();
  return nullptr;
}

void Module::addOp(std::unique_ptr<OpDecl> op) {
  opsByName[op->getName()].push_back(op.get());
  ops.push_back(std::move(op));
}

const OpDecl *Module::lookupOp(StringRef name) const {
  ArrayRef<const OpDecl *> overloads = lookupOverloads(name);
  return overloads.empty() ? nullptr : overloads.front();
}

ArrayRef<const OpDecl *> Module::lookupOverloads(StringRef name) const {
  auto it = opsByName.find(name);
  if (it == opsByName.end())
    return {};
  return it->second;
}
