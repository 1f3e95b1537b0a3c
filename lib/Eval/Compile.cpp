//===- Compile.cpp - Compile a TDL operator into a Program ----------------===//
//
// This file implements CompiledOp::compile: it checks the shapes and params
// given against the operator, resolves every reduction variable's extent,
// folds params and integer constant subexpressions into constants, turns
// each tensor index that is affine in the index variables into an
// IndexDesc evaluated without the stack, and emits the rest of each lambda
// body as postfix instructions.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Evaluator.h"

#include "Program.h"

#include "tofu/Analysis/IndexProgram.h"
#include "tofu/TDL/ExprWalk.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

using namespace tofu;
using namespace tofu::eval;
using namespace tofu::tdl;
using Op = Inst::Op;

namespace {

class ProgramCompiler {
public:
  ProgramCompiler(const OpDecl &op, ArrayRef<Shape> inputShapes,
                  ArrayRef<double> params, Program &prog)
      : op(op), inputShapes(inputShapes), params(params), prog(prog),
        varExtents(prog.numVars, 0) {
    for (unsigned d = 0; d != prog.outputShape.size(); ++d)
      varExtents[d] = prog.outputShape[d];
    for (double p : params)
      intParams.push_back(int64_t(p));
  }

  /// Compiles `body` into a new block and returns its index.
  unsigned compileBlock(const Expr &body);
  /// Resolves the extents of every reduction variable.
  void resolveExtents(const ReduceExpr &e, ReduceDesc &desc);
  llvm::Error takeError() { return std::move(error); }
  bool failed() { return bool(error); }

private:
  void fail(const Twine &msg);
  void push(Block &b, Inst inst, int delta);
  void emit(const Expr &e, Block &b);
  void emitName(const NameExpr &e, Block &b);
  void emitRead(const TensorReadExpr &e, Block &b);
  bool indexRange(const IndexDesc &index, int64_t &lo, int64_t &hi) const;
  void flattenIfInBounds(ReadDesc &desc) const;
  void emitCall(const CallExpr &e, Block &b);
  void emitSelect(const CallExpr &e, Block &b);
  void emitReduce(const ReduceExpr &e, Block &b);
  bool compileIndex(const Expr &e, IndexDesc &out);
  void emitBinary(const BinaryExpr &e, Block &b);
  llvm::Optional<int64_t> coefficient(unsigned slot);
  double paramValue(const ParamDecl &p, ValueType type);

  const OpDecl &op;
  ArrayRef<Shape> inputShapes;
  ArrayRef<double> params;
  SmallVector<int64_t, 4> intParams;
  Program &prog;
  /// The analysis' compiler of index expressions, reused for affine forms.
  analysis::IndexCompiler indexCompiler;
  /// The extent of each index variable (by id) once it is known.
  SmallVector<int64_t, 16> varExtents;
  llvm::Error error = llvm::Error::success();
  unsigned depth = 0, maxDepth = 0;
};

void ProgramCompiler::fail(const Twine &msg) {
  if (error)
    return; // keep the first error
  error = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                  "operator '" + op.getName() + "': " + msg);
}

void ProgramCompiler::push(Block &b, Inst inst, int delta) {
  b.insts.push_back(inst);
  depth += delta;
  maxDepth = std::max(maxDepth, depth);
}

unsigned ProgramCompiler::compileBlock(const Expr &body) {
  unsigned index = prog.blocks.size();
  prog.blocks.emplace_back();
  unsigned savedDepth = depth, savedMax = maxDepth;
  depth = maxDepth = 0;
  Block block;
  emit(body, block);
  prog.stackSize += maxDepth;
  prog.blocks[index] = std::move(block);
  depth = savedDepth;
  maxDepth = savedMax;
  return index;
}

double ProgramCompiler::paramValue(const ParamDecl &p, ValueType type) {
  double v = params[p.getPosition()];
  return type == ValueType::Real ? v : std::trunc(v);
}

void ProgramCompiler::emit(const Expr &e, Block &b) {
  if (e.getType() == ValueType::Int && analysis::isConstantExpr(e))
    if (llvm::Optional<int64_t> v = analysis::evaluateConstant(e, intParams))
      return push(b, {Op::Const, 0, double(*v)}, 1);
  switch (e.getKind()) {
  case Expr::Kind::IntLiteral:
    return push(b, {Op::Const, 0, double(cast<IntLiteralExpr>(e).getValue())},
                1);
  case Expr::Kind::FloatLiteral:
    return push(b, {Op::Const, 0, cast<FloatLiteralExpr>(e).getValue()}, 1);
  case Expr::Kind::Name:
    return emitName(cast<NameExpr>(e), b);
  case Expr::Kind::TensorRead:
    return emitRead(cast<TensorReadExpr>(e), b);
  case Expr::Kind::Call:
    return emitCall(cast<CallExpr>(e), b);
  case Expr::Kind::Reduce:
    return emitReduce(cast<ReduceExpr>(e), b);
  case Expr::Kind::Unary: {
    const auto &un = cast<UnaryExpr>(e);
    emit(un.getOperand(), b);
    return push(b, {un.getOp() == UnaryOp::Neg ? Op::Neg : Op::Not}, 0);
  }
  case Expr::Kind::Binary:
    return emitBinary(cast<BinaryExpr>(e), b);
  }
}

void ProgramCompiler::emitName(const NameExpr &e, Block &b) {
  if (const IndexVarDecl *var = e.getIndexVar())
    return push(b, {Op::Var, var->getId()}, 1);
  if (const ParamDecl *param = e.getParam())
    return push(b, {Op::Const, 0, paramValue(*param, e.getType())}, 1);
  fail("unresolved name '" + e.getName() + "' (was the operator checked?)");
}

/// The value of coefficient `slot` of the index compiler at the params
/// given; None if it is not an integer or needs an extent.
llvm::Optional<int64_t> ProgramCompiler::coefficient(unsigned slot) {
  bool known = true;
  analysis::Rational value =
      indexCompiler.coefficients[slot].evaluate([&](analysis::Atom atom) {
        switch (atom.getKind()) {
        case analysis::Atom::Kind::Param:
          return intParams[atom.getA()];
        case analysis::Atom::Kind::Opaque:
          if (llvm::Optional<int64_t> v = analysis::evaluateConstant(
                  *indexCompiler.opaqueExprs[atom.getA()], intParams))
            return *v;
          break;
        default:
          break;
        }
        known = false;
        return int64_t(0);
      });
  if (!known || !value.isInteger())
    return llvm::None;
  return value.num;
}

/// Compiles an index with the analysis' IndexCompiler: one affine form,
/// maybe floor-divided by or taken modulo a positive coefficient
/// (`(h + p - ky) / s`). Anything else is computed on the stack.
bool ProgramCompiler::compileIndex(const Expr &e, IndexDesc &out) {
  using IndexOp = analysis::IndexInst::Op;
  std::string why;
  llvm::Optional<analysis::IndexProgram> program =
      indexCompiler.compileIndex(e, why);
  if (!program || program->insts.empty() || program->insts.size() > 2 ||
      program->insts[0].op != IndexOp::Affine)
    return false;
  const analysis::AffineForm &form =
      indexCompiler.affineForms[program->insts[0].operand];
  llvm::Optional<int64_t> constant = coefficient(form.constSlot);
  if (!constant)
    return false;
  out.constant = *constant;
  for (const analysis::AffineForm::Term &term : form.terms) {
    llvm::Optional<int64_t> coef = coefficient(term.coefSlot);
    if (!coef)
      return false;
    out.terms.push_back({term.var, *coef});
  }
  if (program->insts.size() == 1)
    return true;
  const analysis::IndexInst &last = program->insts[1];
  llvm::Optional<int64_t> divisor = coefficient(last.operand);
  if ((last.op != IndexOp::Div && last.op != IndexOp::Rem) || !divisor ||
      *divisor <= 0)
    return false;
  out.divisor = *divisor;
  out.modulo = last.op == IndexOp::Rem;
  return true;
}

/// The range `[lo, hi]` of an affine index over the variables' ranges;
/// false if a variable's range is empty or unknown.
bool ProgramCompiler::indexRange(const IndexDesc &index, int64_t &lo,
                                 int64_t &hi) const {
  lo = hi = index.constant;
  for (const auto &[var, coef] : index.terms) {
    if (varExtents[var] <= 0)
      return false;
    int64_t span = coef * (varExtents[var] - 1);
    (span < 0 ? lo : hi) += span;
  }
  return true;
}

/// A read whose affine indices stay in bounds for every value of the
/// variables needs no bounds checks: its offset is one affine form
/// (`A[i, k]` of a matmul is `256 i + k`).
void ProgramCompiler::flattenIfInBounds(ReadDesc &desc) const {
  SmallVector<std::pair<unsigned, int64_t>, 4> terms;
  int64_t constant = 0;
  for (unsigned d = 0, e = desc.indices.size(); d != e; ++d) {
    const IndexDesc &index = desc.indices[d];
    int64_t lo, hi;
    if (index.dynamic || index.divisor || !indexRange(index, lo, hi) ||
        lo < 0 || hi >= desc.extents[d])
      return;
    constant += index.constant * desc.strides[d];
    for (const auto &[var, coef] : index.terms)
      terms.push_back({var, coef * desc.strides[d]});
  }
  desc.inBounds = true;
  desc.flatTerms = std::move(terms);
  desc.flatConstant = constant;
}

void ProgramCompiler::emitRead(const TensorReadExpr &e, Block &b) {
  const TensorDecl *tensor = e.getTensor();
  if (!tensor)
    return fail("unresolved tensor '" + e.getTensorName() + "'");
  ReadDesc desc;
  desc.tensor = tensor->getPosition();
  const Shape &shape = inputShapes[desc.tensor];
  int64_t stride = 1;
  desc.strides.resize(shape.size());
  for (unsigned d = shape.size(); d-- > 0;) {
    desc.strides[d] = stride;
    stride *= shape[d];
  }
  desc.extents = shape;
  for (unsigned i = 0, n = e.getNumIndices(); i != n; ++i) {
    IndexDesc index;
    if (!compileIndex(e.getIndex(i), index)) {
      index = IndexDesc();
      index.dynamic = true;
      ++desc.numDynamic;
      emit(e.getIndex(i), b);
    }
    desc.indices.push_back(std::move(index));
  }
  flattenIfInBounds(desc);
  unsigned numDynamic = desc.numDynamic;
  prog.reads.push_back(std::move(desc));
  push(b, {Op::Read, unsigned(prog.reads.size() - 1)}, 1 - int(numDynamic));
}

Op builtinOp(Builtin builtin, bool &known) {
  known = true;
  switch (builtin) {
#define TDL_MATH_BUILTIN(Id, Arity, Expr)                                      \
  case Builtin::Id:                                                            \
    return Op::Id;
#include "tofu/TDL/MathBuiltins.def"
  default:
    known = false;
    return Op::Const;
  }
}

void ProgramCompiler::emitCall(const CallExpr &e, Block &b) {
  if (!e.getBuiltin())
    return fail("unknown function '" + e.getCallee() + "'");
  if (*e.getBuiltin() == Builtin::Select)
    return emitSelect(e, b);
  if (*e.getBuiltin() == Builtin::Opaque)
    return fail("it is opaque: its value cannot be computed by TDL");
  bool known;
  Op op = builtinOp(*e.getBuiltin(), known);
  if (!known) // dim() and rank(): folded by instantiation
    return fail("'" + e.getCallee() +
                "' is left in the body; instantiate the operator first");
  for (const ExprPtr &arg : e.getArgs())
    emit(*arg, b);
  push(b, {op}, 1 - int(e.getNumArgs()));
}

/// `select(c, a, b)` evaluates only the branch taken: the other one may
/// read many elements (a strided convolution's gradient).
void ProgramCompiler::emitSelect(const CallExpr &e, Block &b) {
  emit(e.getArg(0), b);
  unsigned jumpToElse = b.insts.size();
  push(b, {Op::JumpIfZero}, -1);
  emit(e.getArg(1), b);
  unsigned jumpToEnd = b.insts.size();
  push(b, {Op::Jump}, -1); // the else branch pushes the value instead
  b.insts[jumpToElse].operand = b.insts.size();
  emit(e.getArg(2), b);
  b.insts[jumpToEnd].operand = b.insts.size();
}

void ProgramCompiler::resolveExtents(const ReduceExpr &e, ReduceDesc &desc) {
  for (const auto &var : e.getVars()) {
    desc.vars.push_back(var->getId());
    const Extent &extent = var->getExtent();
    int64_t n = 0;
    if (extent.kind == Extent::Kind::Explicit && var->getExtentExpr()) {
      llvm::Optional<int64_t> v =
          analysis::evaluateConstant(*var->getExtentExpr(), intParams);
      if (!v)
        fail("cannot evaluate the extent of '" + var->getName() + "'");
      n = v.getValueOr(0);
    } else if (extent.kind == Extent::Kind::TensorDim && extent.tensor) {
      const Shape &shape = inputShapes[extent.tensor->getPosition()];
      n = extent.dim < shape.size() ? shape[extent.dim] : 0;
    } else {
      fail("reduction variable '" + var->getName() + "' has no extent");
    }
    desc.extents.push_back(std::max<int64_t>(n, 0));
    varExtents[var->getId()] = desc.extents.back();
  }
}

void ProgramCompiler::emitReduce(const ReduceExpr &e, Block &b) {
  ReduceDesc desc;
  desc.reducer = e.getReducer();
  desc.freeVars = collectFreeIndexVars(e);
  desc.keyOffset = prog.numCacheKeys;
  prog.numCacheKeys += desc.freeVars.size();
  resolveExtents(e, desc);
  desc.body = compileBlock(e.getBody());
  prog.reduces.push_back(std::move(desc));
  push(b, {Op::Reduce, unsigned(prog.reduces.size() - 1)}, 1);
}

Op binaryOp(BinaryOp op, bool integer) {
  switch (op) {
  case BinaryOp::Add: return Op::Add;
  case BinaryOp::Sub: return Op::Sub;
  case BinaryOp::Mul: return Op::Mul;
  case BinaryOp::Div: return integer ? Op::IntDiv : Op::Div;
  case BinaryOp::Rem: return integer ? Op::IntRem : Op::Rem;
  case BinaryOp::Eq: return Op::Eq;
  case BinaryOp::Ne: return Op::Ne;
  case BinaryOp::Lt: return Op::Lt;
  case BinaryOp::Le: return Op::Le;
  case BinaryOp::Gt: return Op::Gt;
  case BinaryOp::Ge: return Op::Ge;
  case BinaryOp::And: return Op::And;
  case BinaryOp::Or: return Op::Or;
  }
  return Op::Add;
}

void ProgramCompiler::emitBinary(const BinaryExpr &e, Block &b) {
  emit(e.getLHS(), b);
  emit(e.getRHS(), b);
  push(b, {binaryOp(e.getOp(), e.getType() == ValueType::Int)}, -1);
}

/// Checks the shapes and params given against `op`.
llvm::Error checkArguments(const OpDecl &op, ArrayRef<Shape> inputShapes,
                           ArrayRef<double> params,
                           ArrayRef<int64_t> outputShape) {
  auto err = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "operator '" + op.getName() + "': " + msg);
  };
  if (inputShapes.size() != op.getTensors().size())
    return err("expects " + Twine(op.getTensors().size()) +
               " input tensors, got " + Twine(inputShapes.size()));
  for (const auto &t : op.getTensors())
    if (t->getRank() >= 0 &&
        inputShapes[t->getPosition()].size() != unsigned(t->getRank()))
      return err("tensor '" + t->getName() + "' has rank " +
                 Twine(t->getRank()) + " but the input given has shape " +
                 formatShape(inputShapes[t->getPosition()]));
  if (params.size() != op.getParams().size())
    return err("expects " + Twine(op.getParams().size()) +
               " param values, got " + Twine(params.size()));
  for (const auto &p : op.getParams()) {
    double v = params[p->getPosition()];
    if (!p->isReal() && v != std::floor(v))
      return err("int param '" + p->getName() +
                 "' was given the non-integral value " + std::to_string(v));
  }
  if (outputShape.size() != op.getOutputRank())
    return err("the output has rank " + Twine(op.getOutputRank()) +
               " but the output shape given is " + formatShape(outputShape));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CompiledOp> CompiledOp::compile(const OpDecl &op,
                                               ArrayRef<Shape> inputShapes,
                                               ArrayRef<double> params,
                                               ArrayRef<int64_t> outputShape) {
  if (op.isOpaque())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "operator '" + op.getName() +
            "' is opaque: its value cannot be computed by TDL");
  if (llvm::Error e = checkArguments(op, inputShapes, params, outputShape))
    return e;
  auto prog = std::make_unique<Program>();
  prog->numVars = op.getIndexVars().size();
  prog->numInputs = inputShapes.size();
  prog->outputShape.assign(outputShape.begin(), outputShape.end());
  prog->realBody = op.getBody().getType() == ValueType::Real;
  ProgramCompiler compiler(op, inputShapes, params, *prog);
  compiler.compileBlock(op.getBody());
  if (compiler.failed())
    return compiler.takeError();
  return CompiledOp(std::move(prog));
}
