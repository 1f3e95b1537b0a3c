//===- AST.h - The TDL abstract syntax tree ---------------------*- C++ -*-===//
//
// This file declares the AST of the Tensor Description Language: a Module of
// OpDecls, each a lambda over output index variables whose body is an
// expression tree. The parser builds the tree; semantic analysis (Sema.h)
// then resolves names to declarations and fills in the annotations marked
// "set by Sema" (tensor ranks, variable extents, value types, and the kind
// of every tensor index), turning the tree into the checked IR that the
// analysis, the evaluator and the tools consume.
//
// Nodes use LLVM-style RTTI: a Kind enum listed once in ExprNodes.def and a
// classof per class, for isa/dyn_cast/TypeSwitch.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_AST_H
#define TOFU_TDL_AST_H

#include "tofu/Support/LLVM.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace tdl {

class IndexVarDecl;
class OpDecl;
class ParamDecl;
class ReduceExpr;
class TensorDecl;

//===----------------------------------------------------------------------===//
// Enumerations shared by the AST and its clients
//===----------------------------------------------------------------------===//

/// A commutative, associative reducer.
enum class Reducer { Sum, Max, Min, Prod };

/// Returns "Sum", "Max", "Min" or "Prod".
StringRef getReducerName(Reducer reducer);
/// Parses a reducer name; None if `name` is not one.
llvm::Optional<Reducer> lookupReducer(StringRef name);

/// The arity of a builtin that takes any number of arguments (`opaque`).
constexpr unsigned VariadicArity = ~0u;

/// A builtin function, listed once in Builtins.def.
enum class Builtin {
#define TDL_BUILTIN(Id, Name, Arity) Id,
#include "tofu/TDL/Builtins.def"
};

StringRef getBuiltinName(Builtin builtin);
unsigned getBuiltinArity(Builtin builtin);
/// Parses a builtin name; None if `name` is not one.
llvm::Optional<Builtin> lookupBuiltin(StringRef name);

enum class UnaryOp { Neg, Not };
enum class BinaryOp { Add, Sub, Mul, Div, Rem, Eq, Ne, Lt, Le, Gt, Ge, And, Or };

StringRef getUnaryOpSpelling(UnaryOp op);
StringRef getBinaryOpSpelling(BinaryOp op);
/// Binding strength of a binary operator; larger binds tighter.
unsigned getBinaryOpPrecedence(BinaryOp op);

/// The value type of an expression (set by Sema). Integer arithmetic is
/// exact and `/` on two integers floors; a tensor element is Real.
enum class ValueType { Unknown, Int, Real, Bool };

StringRef getValueTypeName(ValueType type);

/// How one index expression of a tensor read addresses its dimension (set
/// by Sema). The analysis treats them from exact to whole-dimension:
enum class IndexKind {
  /// Integer-affine in index variables, coefficients are integer constants
  /// or params: analysed exactly.
  Affine,
  /// Affine except for `/` or `%` by a positive constant: conservative.
  DivMod,
  /// Contains a tensor read (`W[idx[i], d]`): the whole dimension.
  DataDependent,
  /// Anything else (a product of variables, a builtin call): the whole
  /// dimension.
  Opaque,
};

StringRef getIndexKindName(IndexKind kind);

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// A tensor parameter of an operator, `A` in `op f(A, B)`.
class TensorDecl {
public:
  TensorDecl(std::string name, SMLoc loc, unsigned position)
      : name(std::move(name)), loc(loc), position(position) {}

  StringRef getName() const { return name; }
  SMLoc getLoc() const { return loc; }
  /// Index in the operator's tensor list; graph inputs bind in this order.
  unsigned getPosition() const { return position; }

  /// The rank fixed by the tensor's reads, or -1 if it is never read (set by
  /// Sema).
  int getRank() const { return rank; }
  /// Location of the read that fixed the rank.
  SMLoc getRankLoc() const { return rankLoc; }
  void setRank(int newRank, SMLoc where) {
    rank = newRank;
    rankLoc = where;
  }

  /// True if the tensor is read with an ellipsis (`x[...i, j]`): its rank is
  /// fixed only at instantiation, and getRank() is -1 (set by Sema).
  bool isRankPolymorphic() const { return rankPolymorphic; }
  /// For a rank-polymorphic tensor, the number of named indices of its reads.
  unsigned getNumNamedDims() const { return numNamedDims; }
  void setRankPolymorphic(unsigned namedDims, SMLoc where) {
    rankPolymorphic = true;
    numNamedDims = namedDims;
    rankLoc = where;
  }

private:
  std::string name;
  SMLoc loc;
  unsigned position;
  int rank = -1;
  SMLoc rankLoc;
  bool rankPolymorphic = false;
  unsigned numNamedDims = 0;
};

/// The declared type of a param: `stride` and `stride: int` are Int,
/// `eps: real` is Real.
enum class ParamType { Int, Real };

/// An attribute of an operator, `stride` in `op conv<stride>(...)` or `eps`
/// in `op norm<eps: real>(...)`.
class ParamDecl {
public:
  ParamDecl(std::string name, SMLoc loc, unsigned position,
            ParamType type = ParamType::Int)
      : name(std::move(name)), loc(loc), position(position), type(type) {}

  StringRef getName() const { return name; }
  SMLoc getLoc() const { return loc; }
  unsigned getPosition() const { return position; }
  ParamType getType() const { return type; }
  /// True for `NAME: real`, which may appear only in value positions.
  bool isReal() const { return type == ParamType::Real; }

private:
  std::string name;
  SMLoc loc;
  unsigned position;
  ParamType type;
};

class Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// Where the range `[0, extent)` of an index variable comes from (set by
/// Sema).
struct Extent {
  enum class Kind {
    /// Not resolved (an error was reported).
    Unknown,
    /// An output variable ranges over output dimension `dim`.
    OutputDim,
    /// A variable with `v < EXPR`; see IndexVarDecl::getExtentExpr. For an
    /// output variable `dim` is its output dimension, and the expression
    /// fixes that dimension's extent.
    Explicit,
    /// Inferred from `tensor` dimension `dim`, which the variable indexes by
    /// itself.
    TensorDim,
  };
  Kind kind = Kind::Unknown;
  unsigned dim = 0;
  const TensorDecl *tensor = nullptr;
};

/// An index variable bound by a lambda: an output variable of the operator
/// or a reduction variable of a ReduceExpr.
class IndexVarDecl {
public:
  enum class Role { Output, Reduction };

  IndexVarDecl(std::string name, SMLoc loc, Role role, ExprPtr extentExpr,
               bool ellipsis = false);
  ~IndexVarDecl();

  StringRef getName() const { return name; }
  SMLoc getLoc() const { return loc; }
  Role getRole() const { return role; }
  /// True for the ellipsis variable `...i` of a rank-polymorphic operator.
  bool isEllipsis() const { return ellipsis; }
  bool isOutput() const { return role == Role::Output; }
  bool isReduction() const { return role == Role::Reduction; }
  /// The explicit extent of `v < EXPR`, or null.
  const Expr *getExtentExpr() const { return extentExpr.get(); }
  Expr *getExtentExpr() { return extentExpr.get(); }

  /// Dense number of the variable within its operator: output variables
  /// first, in order, then reduction variables in source order (set by
  /// Sema). Clients index per-variable tables with it.
  unsigned getId() const { return id; }
  void setId(unsigned newId) { id = newId; }

  const Extent &getExtent() const { return extent; }
  void setExtent(const Extent &newExtent) { extent = newExtent; }

  /// The reduction that binds this variable, null for output variables (set
  /// by Sema).
  const ReduceExpr *getReduction() const { return reduction; }
  void setReduction(const ReduceExpr *owner) { reduction = owner; }

private:
  std::string name;
  SMLoc loc;
  Role role;
  ExprPtr extentExpr;
  bool ellipsis;
  unsigned id = 0;
  Extent extent;
  const ReduceExpr *reduction = nullptr;
};

using IndexVarList = std::vector<std::unique_ptr<IndexVarDecl>>;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Base of all expression nodes.
class Expr {
public:
  enum class Kind {
#define TDL_EXPR(Name) Name,
#include "tofu/TDL/ExprNodes.def"
  };

  virtual ~Expr();

  Kind getKind() const { return kind; }
  SMLoc getLoc() const { return loc; }

  ValueType getType() const { return type; }
  void setType(ValueType newType) { type = newType; }

protected:
  Expr(Kind kind, SMLoc loc) : kind(kind), loc(loc) {}

private:
  Kind kind;
  SMLoc loc;
  ValueType type = ValueType::Unknown;
};

/// An integer literal, `2`.
class IntLiteralExpr : public Expr {
public:
  IntLiteralExpr(SMLoc loc, int64_t value)
      : Expr(Kind::IntLiteral, loc), value(value) {}
  int64_t getValue() const { return value; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::IntLiteral; }

private:
  int64_t value;
};

/// A floating-point literal, `0.5` or `1e-5`.
class FloatLiteralExpr : public Expr {
public:
  FloatLiteralExpr(SMLoc loc, double value)
      : Expr(Kind::FloatLiteral, loc), value(value) {}
  double getValue() const { return value; }
  static bool classof(const Expr *e) {
    return e->getKind() == Kind::FloatLiteral;
  }

private:
  double value;
};

/// A use of an index variable or a param by name (resolved by Sema), or
/// the ellipsis `...i` as an index of a tensor read.
class NameExpr : public Expr {
public:
  NameExpr(SMLoc loc, std::string name, bool ellipsis = false)
      : Expr(Kind::Name, loc), name(std::move(name)), ellipsis(ellipsis) {}
  StringRef getName() const { return name; }
  /// True for `...i` in a tensor read.
  bool isEllipsis() const { return ellipsis; }

  /// The index variable named, or null.
  const IndexVarDecl *getIndexVar() const { return var; }
  /// The param named, or null.
  const ParamDecl *getParam() const { return param; }
  void resolve(const IndexVarDecl *v) { var = v; }
  void resolve(const ParamDecl *p) { param = p; }

  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }

private:
  std::string name;
  bool ellipsis;
  const IndexVarDecl *var = nullptr;
  const ParamDecl *param = nullptr;
};

/// A tensor element read, `A[i, k + 1]`.
class TensorReadExpr : public Expr {
public:
  TensorReadExpr(SMLoc loc, std::string tensorName, std::vector<ExprPtr> indices)
      : Expr(Kind::TensorRead, loc), tensorName(std::move(tensorName)),
        indices(std::move(indices)) {}

  StringRef getTensorName() const { return tensorName; }
  unsigned getNumIndices() const { return indices.size(); }
  const Expr &getIndex(unsigned i) const { return *indices[i]; }
  Expr &getIndex(unsigned i) { return *indices[i]; }
  ArrayRef<ExprPtr> getIndices() const { return indices; }

  /// The tensor read (set by Sema).
  const TensorDecl *getTensor() const { return tensor; }
  void setTensor(const TensorDecl *t) { tensor = t; }
  /// The kind of each index (set by Sema).
  IndexKind getIndexKind(unsigned i) const { return indexKinds[i]; }
  void setIndexKinds(std::vector<IndexKind> kinds) { indexKinds = std::move(kinds); }

  static bool classof(const Expr *e) {
    return e->getKind() == Kind::TensorRead;
  }

private:
  std::string tensorName;
  std::vector<ExprPtr> indices;
  const TensorDecl *tensor = nullptr;
  std::vector<IndexKind> indexKinds;
};

/// A builtin call, `exp(x)`. The callee is resolved by Sema; a call to an
/// unknown name stays in the tree so that it can be reported.
class CallExpr : public Expr {
public:
  CallExpr(SMLoc loc, std::string callee, std::vector<ExprPtr> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)), args(std::move(args)) {}

  StringRef getCallee() const { return callee; }
  unsigned getNumArgs() const { return args.size(); }
  const Expr &getArg(unsigned i) const { return *args[i]; }
  Expr &getArg(unsigned i) { return *args[i]; }
  ArrayRef<ExprPtr> getArgs() const { return args; }

  /// The builtin called (set by Sema; None on error).
  llvm::Optional<Builtin> getBuiltin() const { return builtin; }
  void setBuiltin(Builtin b) { builtin = b; }

  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }

private:
  std::string callee;
  std::vector<ExprPtr> args;
  llvm::Optional<Builtin> builtin;
};

/// A reduction over a lambda, `Sum(lambda ci, dx: body)`.
class ReduceExpr : public Expr {
public:
  ReduceExpr(SMLoc loc, Reducer reducer, IndexVarList vars, ExprPtr body)
      : Expr(Kind::Reduce, loc), reducer(reducer), vars(std::move(vars)),
        body(std::move(body)) {}

  Reducer getReducer() const { return reducer; }
  ArrayRef<std::unique_ptr<IndexVarDecl>> getVars() const { return vars; }
  const Expr &getBody() const { return *body; }
  Expr &getBody() { return *body; }

  static bool classof(const Expr *e) { return e->getKind() == Kind::Reduce; }

private:
  Reducer reducer;
  IndexVarList vars;
  ExprPtr body;
};

/// `-e` or `!e`.
class UnaryExpr : public Expr {
public:
  UnaryExpr(SMLoc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  UnaryOp getOp() const { return op; }
  const Expr &getOperand() const { return *operand; }
  Expr &getOperand() { return *operand; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }

private:
  UnaryOp op;
  ExprPtr operand;
};

/// `lhs op rhs`.
class BinaryExpr : public Expr {
public:
  BinaryExpr(SMLoc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  BinaryOp getOp() const { return op; }
  const Expr &getLHS() const { return *lhs; }
  const Expr &getRHS() const { return *rhs; }
  Expr &getLHS() { return *lhs; }
  Expr &getRHS() { return *rhs; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }

private:
  BinaryOp op;
  ExprPtr lhs, rhs;
};

//===----------------------------------------------------------------------===//
// Operators and modules
//===----------------------------------------------------------------------===//

/// `op NAME<PARAMS>(TENSORS) where GUARD = lambda OUTPUT_VARS: BODY;`
class OpDecl {
public:
  OpDecl(std::string name, SMLoc loc,
         std::vector<std::unique_ptr<ParamDecl>> params,
         std::vector<std::unique_ptr<TensorDecl>> tensors,
         IndexVarList outputVars, ExprPtr body, ExprPtr guard = nullptr);

  StringRef getName() const { return name; }
  SMLoc getLoc() const { return loc; }
  ArrayRef<std::unique_ptr<ParamDecl>> getParams() const { return params; }
  ArrayRef<std::unique_ptr<TensorDecl>> getTensors() const { return tensors; }
  ArrayRef<std::unique_ptr<IndexVarDecl>> getOutputVars() const {
    return outputVars;
  }
  /// Rank of the output: the number of output variables.
  unsigned getOutputRank() const { return outputVars.size(); }
  const Expr &getBody() const { return *body; }
  Expr &getBody() { return *body; }
  /// The `where` guard, or null.
  const Expr *getGuard() const { return guard.get(); }
  Expr *getGuard() { return guard.get(); }
  /// The output ellipsis variable `...i`, or null.
  const IndexVarDecl *getEllipsisVar() const;

  /// True if the operator must be instantiated (Instantiate.h) before it is
  /// analysed or evaluated: it has an ellipsis variable, a guard, or a
  /// `dim`/`rank` call (set by Sema).
  bool isGeneric() const { return generic; }
  void setGeneric(bool value) { generic = value; }
  /// True if the body is `opaque` or `opaque(READS...)`: TDL cannot compute
  /// its value.
  bool isOpaque() const;

  /// Every index variable, indexed by IndexVarDecl::getId() (set by Sema).
  ArrayRef<const IndexVarDecl *> getIndexVars() const { return indexVars; }
  void setIndexVars(std::vector<const IndexVarDecl *> vars) {
    indexVars = std::move(vars);
  }
  /// The reduction variables, in source order (set by Sema).
  ArrayRef<const IndexVarDecl *> getReductionVars() const {
    return getIndexVars().drop_front(getOutputRank());
  }

  const TensorDecl *lookupTensor(StringRef name) const;
  TensorDecl *lookupTensor(StringRef name);
  const ParamDecl *lookupParam(StringRef name) const;

private:
  std::string name;
  SMLoc loc;
  std::vector<std::unique_ptr<ParamDecl>> params;
  std::vector<std::unique_ptr<TensorDecl>> tensors;
  IndexVarList outputVars;
  ExprPtr body;
  ExprPtr guard;
  std::vector<const IndexVarDecl *> indexVars;
  bool generic = false;
};

/// The operators of one or more .tdl files.
class Module {
public:
  void addOp(std::unique_ptr<OpDecl> op);
  ArrayRef<std::unique_ptr<OpDecl>> getOps() const { return ops; }
  /// The first operator named `name`, or null.
  const OpDecl *lookupOp(StringRef name) const;
  /// Every operator named `name` (its overloads), in source order.
  ArrayRef<const OpDecl *> lookupOverloads(StringRef name) const;

private:
  std::vector<std::unique_ptr<OpDecl>> ops;
  llvm::StringMap<SmallVector<const OpDecl *, 1>> opsByName;
};

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_AST_H
