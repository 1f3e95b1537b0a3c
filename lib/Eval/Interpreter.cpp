//===- Interpreter.cpp - Execute a compiled operator ----------------------===//
//
// This file implements CompiledOp::run: an odometer over the output
// coordinates sets the output variables and runs the body block; a Reduce
// instruction runs an odometer over its variables and folds its block's
// values. Blocks run on one preallocated stack of doubles, a nested block
// on the slots above its caller's top, so nothing is allocated per element.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Evaluator.h"

#include "Program.h"

#include "tofu/Analysis/IndexProgram.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace tofu;
using namespace tofu::eval;
using Op = Inst::Op;

namespace {

/// The cached value of each reduction and the free-variable values it was
/// computed for.
struct ReduceCache {
  explicit ReduceCache(const Program &prog)
      : keys(prog.numCacheKeys), values(prog.reduces.size()),
        valid(prog.reduces.size(), false) {}
  std::vector<int64_t> keys;
  std::vector<double> values;
  std::vector<bool> valid;
};

class Machine {
public:
  Machine(const Program &prog, const double *const *inputs, int64_t *vars)
      : prog(prog), inputs(inputs), vars(vars), cache(prog) {}

  /// Box mode (CompiledOp::runBox): input `t` holds only the dense box at
  /// `boxLo[t]` with row-major strides `boxStrides[t]`, and reductions range
  /// over the intersection with [varLo, varHi).
  void setBoxes(const int64_t *const *lo, const int64_t *const *strides,
                const int64_t *rangeLo, const int64_t *rangeHi) {
    boxLo = lo;
    boxStrides = strides;
    varLo = rangeLo;
    varHi = rangeHi;
  }

  /// Runs block `index` with its stack starting at `stack`.
  double run(unsigned index, double *stack) const;

private:
  double read(const ReadDesc &desc, const double *dynamic) const;
  double reduce(unsigned index, double *stack) const;
  double fold(const ReduceDesc &desc, double *stack) const;

  const Program &prog;
  const double *const *inputs;
  int64_t *vars;
  mutable ReduceCache cache;
  const int64_t *const *boxLo = nullptr;
  const int64_t *const *boxStrides = nullptr;
  const int64_t *varLo = nullptr;
  const int64_t *varHi = nullptr;
};

/// True if `v` converts to int64_t exactly (an integer-typed value; an
/// empty integer Max gives -inf, which does not).
bool isInt64(double v) { return v > -9.0e18 && v < 9.0e18; }

/// Integer `/` and `%` over doubles that hold integers; by zero they give 0.
double intDiv(double a, double b) {
  if (b == 0)
    return 0;
  if (!isInt64(a) || !isInt64(b))
    return std::floor(a / b);
  return double(analysis::floorDiv(int64_t(a), int64_t(b)));
}

double intRem(double a, double b) {
  if (b == 0)
    return 0;
  if (!isInt64(a) || !isInt64(b))
    return a - b * std::floor(a / b);
  return double(analysis::floorMod(int64_t(a), int64_t(b)));
}

/// Real `%` with the divisor's sign, as for integers (Python's `%`).
double realRem(double a, double b) { return a - b * std::floor(a / b); }

/// max/min that propagate NaN, as PyTorch's maximum/minimum do.
double maxOf(double a, double b) { return (a > b || std::isnan(a)) ? a : b; }
double minOf(double a, double b) { return (a < b || std::isnan(a)) ? a : b; }

double sign(double a) { return a > 0 ? 1.0 : a < 0 ? -1.0 : a; }

// rand_uniform and rand_normal: the Philox generator, from the text the
// kernel prelude pastes (Philox.def).
#define TOFU_HD
#define TDL_PHILOX_SOURCE(...) __VA_ARGS__
#include "tofu/TDL/Philox.def"
#undef TOFU_HD

double Machine::read(const ReadDesc &desc, const double *dynamic) const {
  if (desc.inBounds && !boxLo) {
    int64_t offset = desc.flatConstant;
    for (const auto &[var, coef] : desc.flatTerms)
      offset += coef * vars[var];
    return inputs[desc.tensor][offset];
  }
  int64_t offset = 0;
  for (unsigned d = 0, e = desc.indices.size(); d != e; ++d) {
    const IndexDesc &index = desc.indices[d];
    int64_t i;
    if (index.dynamic) {
      double v = *dynamic++;
      // A data-dependent index is truncated; NaN and huge values are out of
      // bounds.
      if (!isInt64(v))
        return 0;
      i = int64_t(v);
    } else {
      i = index.constant;
      for (const auto &[var, coef] : index.terms)
        i += coef * vars[var];
      if (index.divisor)
        i = index.modulo ? analysis::floorMod(i, index.divisor)
                         : analysis::floorDiv(i, index.divisor);
    }
    if (uint64_t(i) >= uint64_t(desc.extents[d]))
      return 0;
    if (boxLo) {
      i -= boxLo[desc.tensor][d];
      assert(i >= 0 && "a read inside the tensor falls inside its box");
      offset += i * boxStrides[desc.tensor][d];
    } else {
      offset += i * desc.strides[d];
    }
  }
  return inputs[desc.tensor][offset];
}

double identity(tdl::Reducer reducer) {
  switch (reducer) {
  case tdl::Reducer::Sum: return 0;
  case tdl::Reducer::Prod: return 1;
  case tdl::Reducer::Max: return -std::numeric_limits<double>::infinity();
  case tdl::Reducer::Min: return std::numeric_limits<double>::infinity();
  }
  return 0;
}

double Machine::reduce(unsigned index, double *stack) const {
  const ReduceDesc &desc = prog.reduces[index];
  int64_t *key = cache.keys.data() + desc.keyOffset;
  bool hit = cache.valid[index];
  for (unsigned k = 0, e = desc.freeVars.size(); k != e; ++k)
    if (key[k] != vars[desc.freeVars[k]]) {
      hit = false;
      key[k] = vars[desc.freeVars[k]];
    }
  if (!hit) {
    cache.values[index] = fold(desc, stack);
    cache.valid[index] = true;
  }
  return cache.values[index];
}

double Machine::fold(const ReduceDesc &desc, double *stack) const {
  double acc = identity(desc.reducer);
  unsigned n = desc.vars.size();
  // Each variable's range: [0, extent), within [varLo, varHi) in box mode.
  SmallVector<int64_t, 4> lo(n, 0), hi(desc.extents.begin(), desc.extents.end());
  for (unsigned k = 0; k != n; ++k) {
    if (varLo) {
      lo[k] = std::max<int64_t>(0, varLo[desc.vars[k]]);
      hi[k] = std::min<int64_t>(hi[k], varHi[desc.vars[k]]);
    }
    if (hi[k] <= lo[k])
      return acc;
    vars[desc.vars[k]] = lo[k];
  }
  for (;;) {
    double v = run(desc.body, stack);
    switch (desc.reducer) {
    case tdl::Reducer::Sum: acc += v; break;
    case tdl::Reducer::Prod: acc *= v; break;
    case tdl::Reducer::Max: acc = maxOf(v, acc); break;
    case tdl::Reducer::Min: acc = minOf(v, acc); break;
    }
    // Advance the odometer, innermost (last) variable first.
    unsigned k = n;
    while (k-- > 0) {
      if (++vars[desc.vars[k]] < hi[k])
        break;
      vars[desc.vars[k]] = lo[k];
    }
    if (k == unsigned(-1))
      return acc;
  }
}

double Machine::run(unsigned index, double *stack) const {
  double *sp = stack;
  const std::vector<Inst> &insts = prog.blocks[index].insts;
  for (size_t pc = 0, end = insts.size(); pc != end; ++pc) {
    const Inst &inst = insts[pc];
    switch (inst.op) {
#define UNARY(Id, expr)                                                        \
  case Op::Id: {                                                               \
    double a = sp[-1];                                                         \
    sp[-1] = (expr);                                                           \
    break;                                                                     \
  }
#define BINARY(Id, expr)                                                       \
  case Op::Id: {                                                               \
    double a = sp[-2], b = sp[-1];                                             \
    sp[-2] = (expr);                                                           \
    --sp;                                                                      \
    break;                                                                     \
  }
    case Op::Const: *sp++ = inst.imm; break;
    case Op::Var: *sp++ = double(vars[inst.operand]); break;
    case Op::Read: {
      const ReadDesc &desc = prog.reads[inst.operand];
      sp -= desc.numDynamic;
      *sp = read(desc, sp);
      ++sp;
      break;
    }
    case Op::Reduce:
      *sp = reduce(inst.operand, sp);
      ++sp;
      break;
    UNARY(Neg, -a)
    UNARY(Not, a == 0 ? 1.0 : 0.0)
    BINARY(Add, a + b)
    BINARY(Sub, a - b)
    BINARY(Mul, a * b)
    BINARY(Div, a / b)
    BINARY(IntDiv, intDiv(a, b))
    BINARY(Rem, realRem(a, b))
    BINARY(IntRem, intRem(a, b))
    BINARY(Eq, a == b ? 1.0 : 0.0)
    BINARY(Ne, a != b ? 1.0 : 0.0)
    BINARY(Lt, a < b ? 1.0 : 0.0)
    BINARY(Le, a <= b ? 1.0 : 0.0)
    BINARY(Gt, a > b ? 1.0 : 0.0)
    BINARY(Ge, a >= b ? 1.0 : 0.0)
    BINARY(And, (a != 0 && b != 0) ? 1.0 : 0.0)
    BINARY(Or, (a != 0 || b != 0) ? 1.0 : 0.0)
    case Op::JumpIfZero:
      if (*--sp == 0)
        pc = inst.operand - 1;
      break;
    case Op::Jump:
      pc = inst.operand - 1;
      break;
#define QUATERNARY(Id, expr)                                                   \
  case Op::Id: {                                                               \
    double a = sp[-4], b = sp[-3], c = sp[-2], d = sp[-1];                     \
    sp[-4] = (expr);                                                           \
    sp -= 3;                                                                   \
    break;                                                                     \
  }
#define MATH_BUILTIN_1 UNARY
#define MATH_BUILTIN_2 BINARY
#define MATH_BUILTIN_4 QUATERNARY
#define TDL_MATH_BUILTIN(Id, Arity, Expr) MATH_BUILTIN_##Arity(Id, Expr)
#include "tofu/TDL/MathBuiltins.def"
#undef MATH_BUILTIN_1
#undef MATH_BUILTIN_2
#undef MATH_BUILTIN_4
#undef UNARY
#undef BINARY
#undef QUATERNARY
    }
  }
  assert(sp == stack + 1 && "a block leaves one value");
  return sp[-1];
}

} // namespace

CompiledOp::CompiledOp(std::unique_ptr<Program> program)
    : program(std::move(program)) {}
CompiledOp::CompiledOp(CompiledOp &&) = default;
CompiledOp &CompiledOp::operator=(CompiledOp &&) = default;
CompiledOp::~CompiledOp() = default;

bool CompiledOp::hasRealBody() const { return program->realBody; }

unsigned CompiledOp::getNumVars() const { return program->numVars; }

void CompiledOp::run(ArrayRef<const Tensor *> inputs, Tensor &output) const {
  const Program &prog = *program;
  assert(inputs.size() == prog.numInputs && "one tensor per operator input");
  assert(output.getShape() == ArrayRef<int64_t>(prog.outputShape) &&
         "the output has the compiled shape");
  SmallVector<const double *, 4> data;
  for (const Tensor *t : inputs)
    data.push_back(t->getData().data());
  SmallVector<int64_t, 16> vars(prog.numVars, 0);
  std::vector<double> stack(prog.stackSize + 1);
  Machine machine(prog, data.data(), vars.data());
  llvm::MutableArrayRef<double> out = output.getData();
  unsigned rank = prog.outputShape.size();
  for (int64_t i = 0, e = out.size(); i != e; ++i) {
    out[i] = machine.run(0, stack.data());
    // Advance the output coordinates, last dimension first.
    for (unsigned d = rank; d-- > 0;) {
      if (++vars[d] < prog.outputShape[d])
        break;
      vars[d] = 0;
    }
  }
}

void CompiledOp::runBox(ArrayRef<BoxArg> inputs, const BoxOut &output,
                        ArrayRef<int64_t> varLo,
                        ArrayRef<int64_t> varHi) const {
  const Program &prog = *program;
  assert(inputs.size() == prog.numInputs && "one box per operator input");
  assert(varLo.size() == prog.numVars && varHi.size() == prog.numVars &&
         "a range per index variable");
  unsigned numInputs = inputs.size();
  SmallVector<const double *, 4> data;
  SmallVector<Shape, 4> strides(numInputs);
  SmallVector<const int64_t *, 4> los, strideData;
  for (unsigned t = 0; t != numInputs; ++t) {
    const BoxArg &arg = inputs[t];
    data.push_back(arg.data);
    strides[t].assign(arg.extent.size(), 1);
    for (unsigned d = arg.extent.size(); d-- > 1;)
      strides[t][d - 1] = strides[t][d] * arg.extent[d];
    los.push_back(arg.lo.data());
    strideData.push_back(strides[t].data());
  }
  SmallVector<int64_t, 16> vars(prog.numVars, 0);
  std::vector<double> stack(prog.stackSize + 1);
  Machine machine(prog, data.data(), vars.data());
  machine.setBoxes(los.data(), strideData.data(), varLo.data(), varHi.data());
  unsigned rank = prog.outputShape.size();
  Shape outStrides(rank, 1);
  for (unsigned d = rank; d-- > 1;)
    outStrides[d - 1] = outStrides[d] * output.extent[d];
  for (unsigned d = 0; d != rank; ++d) {
    if (varHi[d] <= varLo[d])
      return;
    vars[d] = varLo[d];
  }
  for (;;) {
    int64_t offset = 0;
    for (unsigned d = 0; d != rank; ++d)
      offset += (vars[d] - output.lo[d]) * outStrides[d];
    output.data[offset] = machine.run(0, stack.data());
    unsigned d = rank;
    while (d-- > 0) {
      if (++vars[d] < varHi[d])
        break;
      vars[d] = varLo[d];
    }
    if (d == unsigned(-1))
      return;
  }
}
