//===- IntArith.h - TDL's integer arithmetic --------------------*- C++ -*-===//
//
// This file declares the integer semantics of TDL in one place: `/` floors,
// `%` takes the divisor's sign, comparisons and `&& || !` give 0 or 1, and
// the builtins that have an integer meaning (abs, max, min, select). The
// analysis's constant folding and the Instantiator's guard evaluation both
// use it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_INTARITH_H
#define TOFU_TDL_INTARITH_H

#include "tofu/TDL/AST.h"

namespace tofu {
namespace tdl {

/// Floor division and the matching modulo (for b != 0).
int64_t floorDiv(int64_t a, int64_t b);
int64_t floorMod(int64_t a, int64_t b);

/// `a op b` on integers; None on division by zero.
llvm::Optional<int64_t> applyIntBinary(BinaryOp op, int64_t a, int64_t b);

/// `builtin(args...)` on integers for abs, max, min and select; None for
/// the other builtins, which have no integer meaning.
llvm::Optional<int64_t> applyIntBuiltin(Builtin builtin,
                                        ArrayRef<int64_t> args);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_INTARITH_H
