//===- Program.h - The evaluator's compiled form of an operator -*- C++ -*-===//
//
// This file declares Program, private to TofuEval: what Compile.cpp makes
// of an operator and Interpreter.cpp executes. Each lambda body (the
// operator's and each reduction's) is a Block, a postfix instruction list
// over a stack of doubles. Index variables live in a dense int64 array
// indexed by IndexVarDecl::getId(); params are folded into constants;
// every tensor read has a ReadDesc whose affine indices are evaluated
// straight from the variable array and whose other indices are popped.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_EVAL_PROGRAM_H
#define TOFU_LIB_EVAL_PROGRAM_H

#include "tofu/Support/Shape.h"
#include "tofu/TDL/AST.h"

#include <vector>

namespace tofu {
namespace eval {

/// One postfix instruction.
struct Inst {
  enum class Op : uint8_t {
    Const,  // push imm
    Var,    // push vars[operand]
    Read,   // pop the dynamic indices of reads[operand], push the element
    Reduce, // push the value of reduces[operand]
    JumpIfZero, // pop; if it is 0, continue at instruction `operand`
    Jump,       // continue at instruction `operand`
    Neg, Not,
    Add, Sub, Mul, Div, IntDiv, Rem, IntRem,
    Eq, Ne, Lt, Le, Gt, Ge, And, Or,
    // The numeric builtins, by their Builtin enumerators.
#define TDL_MATH_BUILTIN(Id, Arity, Expr) Id,
#include "tofu/TDL/MathBuiltins.def"
  };
  Op op;
  unsigned operand = 0;
  double imm = 0;
};

/// A postfix instruction list that leaves one value on the stack.
struct Block {
  std::vector<Inst> insts;
};

/// One index of a tensor read: `constant + sum coef * vars[var]`, floor
/// divided by `divisor` (or taken modulo it, if `modulo`) when `divisor` is
/// not 0; or, when `dynamic`, a value computed by the block and popped.
struct IndexDesc {
  SmallVector<std::pair<unsigned, int64_t>, 2> terms;
  int64_t constant = 0;
  int64_t divisor = 0;
  bool modulo = false;
  bool dynamic = false;
};

/// A tensor read with its tensor's extents and strides resolved.
struct ReadDesc {
  unsigned tensor;
  SmallVector<IndexDesc, 4> indices;
  Shape extents;
  Shape strides;
  unsigned numDynamic = 0;
  /// True if every index is affine and provably in bounds: then the offset
  /// is `flatConstant + sum coef * vars[var]` over `flatTerms`.
  bool inBounds = false;
  SmallVector<std::pair<unsigned, int64_t>, 4> flatTerms;
  int64_t flatConstant = 0;
};

/// A reduction: loop `vars` over `[0, extents)` and fold `body`. Its value
/// depends only on the `freeVars` (the variables of enclosing lambdas that
/// the body uses), so the interpreter caches it on their values: a
/// normalization's mean over (n, y, x) is computed once per channel, not
/// once per element.
struct ReduceDesc {
  tdl::Reducer reducer;
  SmallVector<unsigned, 4> vars;
  Shape extents;
  unsigned body;
  SmallVector<unsigned, 4> freeVars;
  /// Where the cached key (one slot per free variable) starts.
  unsigned keyOffset = 0;
};

/// A compiled operator; blocks[0] is the operator's body.
struct Program {
  std::vector<Block> blocks;
  std::vector<ReadDesc> reads;
  std::vector<ReduceDesc> reduces;
  unsigned numVars = 0;
  unsigned numInputs = 0;
  /// Total free variables of all reductions: the size of the cache keys.
  unsigned numCacheKeys = 0;
  /// Enough stack slots for every block nested at once.
  unsigned stackSize = 0;
  Shape outputShape;
  bool realBody = true;
};

} // namespace eval
} // namespace tofu

#endif // TOFU_LIB_EVAL_PROGRAM_H
