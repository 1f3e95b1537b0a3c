//===- IndexProgram.h - Compiled index expressions --------------*- C++ -*-===//
//
// This file declares IndexProgram, the form in which the analysis keeps one
// index expression of one tensor read: a short postfix program over
// interval values whose leaves are affine forms (sum of coefficient * index
// variable, plus a constant). An index that is affine in the index
// variables compiles to a single affine leaf, which interval evaluation
// bounds exactly (each variable occurs once, so `x + dx - x` is exact); `/`
// and `%` by a constant become Div/Rem instructions, analysed
// conservatively; anything else (data-dependent, a product of variables, a
// builtin) is the whole dimension. Coefficients and constants are
// polynomials over params, stored once per operator in a coefficient table
// and referenced by slot, so that binding params evaluates each of them
// once and the per-region work is integer arithmetic only.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_INDEXPROGRAM_H
#define TOFU_ANALYSIS_INDEXPROGRAM_H

#include "tofu/Analysis/Poly.h"
#include "tofu/TDL/IntArith.h"
#include "tofu/TDL/Sema.h"
#include "tofu/Runtime/IndexIntervals.h"

#include "llvm/ADT/Optional.h"

#include <string>
#include <vector>

namespace tofu {
namespace tdl {
class Expr;
} // namespace tdl

namespace analysis {

/// `sum coef(terms[i].coefSlot) * var(terms[i].var) + coef(constSlot)`.
struct AffineForm {
  struct Term {
    unsigned var;
    unsigned coefSlot;
  };
  SmallVector<Term, 2> terms;
  unsigned constSlot = 0;
};

/// One postfix instruction over a stack of closed integer intervals; the
/// ops are the runtime's (runtime::IndexOp, tofu/Runtime/IndexIntervals.h),
/// whose interval rule both the analysis and compiled plans evaluate.
struct IndexInst {
  /// Affine: push the interval of affine form `operand`; Add, Sub: pop two,
  /// push their sum / difference; Neg: negate the top; MulConst: multiply
  /// the top by coefficient `operand`; Div, Rem: floor-divide the top by,
  /// or take it modulo, coefficient `operand` (the whole dimension if that
  /// is not positive).
  using Op = runtime::IndexOp;
  Op op;
  unsigned operand = 0;
};

/// How one index of a tensor read is analysed.
struct IndexProgram {
  /// Affine: one affine leaf, the interval exact; DivMod: affine leaves
  /// under `/`, `%` by constants, conservative; Whole: data dependent or
  /// opaque, the whole dimension (runtime::IndexKind).
  using Kind = runtime::IndexKind;
  Kind kind = Kind::Whole;
  SmallVector<IndexInst, 1> insts;
  /// Bit `v` set if index variable `v` occurs.
  uint64_t varMask = 0;
  /// The deepest evaluation stack the program needs.
  unsigned maxDepth = 0;
  /// The index variable the index is, when it is exactly one variable with
  /// coefficient 1 and constant 0 (`filters[ci, co, dx]`), else -1.
  int loneVar = -1;
};

/// The most index variables an operator may have for the analysis (their
/// sets are 64-bit masks).
constexpr unsigned MaxIndexVars = 64;

/// The largest magnitude of any bound of index arithmetic: Binding refuses
/// shapes and params for which a bound over the full extents would go
/// beyond it, so that interval evaluation over any sub-box, and the `+ 1`
/// of a half-open range, cannot overflow int64_t.
constexpr int64_t MaxIndexMagnitude = int64_t(1) << 62;

/// The most stack slots an index program may use; deeper ones are analysed
/// as the whole dimension.
constexpr unsigned MaxIndexDepth = 8;
static_assert(MaxIndexDepth <= runtime::MaxIndexStack,
              "the interval rule's stack holds every analysed index");

/// Owns the coefficient table, the affine forms and the opaque constant
/// expressions of one operator and compiles expressions into them.
class IndexCompiler {
public:
  /// Compiles an index expression. Returns None if it is not analysable
  /// (the caller then reads the whole dimension); `why` says why.
  llvm::Optional<IndexProgram> compileIndex(const tdl::Expr &e,
                                            std::string &why);
  /// Compiles a constant expression over params into a polynomial; parts
  /// that are not polynomial become Opaque atoms.
  Poly compileConstant(const tdl::Expr &e);
  /// Adds `p` to the coefficient table and returns its slot.
  unsigned addCoefficient(Poly p);

  std::vector<Poly> coefficients;
  std::vector<AffineForm> affineForms;
  std::vector<const tdl::Expr *> opaqueExprs;

private:
  struct Linear;
  bool linearize(const tdl::Expr &e, Linear &out);
  bool emit(const tdl::Expr &e, IndexProgram &prog, unsigned depth);
  unsigned addAffine(const Linear &lin);
};

/// True if `e` has no index variable and no tensor read (Sema's test).
using tdl::isConstantExpr;

/// Evaluates a constant expression over params with TDL's integer
/// semantics (`/` floors, `%` takes the divisor's sign). None if it is not
/// an integer or divides by zero.
llvm::Optional<int64_t> evaluateConstant(const tdl::Expr &e,
                                         ArrayRef<int64_t> params);

/// Floor division and the matching modulo (for b != 0), as TDL defines
/// them.
using tdl::floorDiv;
using tdl::floorMod;

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_INDEXPROGRAM_H
