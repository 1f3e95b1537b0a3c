//===- IntArith.cpp - TDL's integer arithmetic ----------------------------===//
//
// This file implements floor division, the binary operators and the
// integer builtins with TDL's semantics.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/IntArith.h"

using namespace tofu;
using namespace tofu::tdl;

int64_t tdl::floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t tdl::floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

llvm::Optional<int64_t> tdl::applyIntBinary(BinaryOp op, int64_t a,
                                            int64_t b) {
  switch (op) {
  case BinaryOp::Add: return a + b;
  case BinaryOp::Sub: return a - b;
  case BinaryOp::Mul: return a * b;
  case BinaryOp::Div:
    return b == 0 ? llvm::Optional<int64_t>() : floorDiv(a, b);
  case BinaryOp::Rem:
    return b == 0 ? llvm::Optional<int64_t>() : floorMod(a, b);
  case BinaryOp::Eq: return a == b;
  case BinaryOp::Ne: return a != b;
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  case BinaryOp::And: return a && b;
  case BinaryOp::Or: return a || b;
  }
  return llvm::None;
}

llvm::Optional<int64_t> tdl::applyIntBuiltin(Builtin builtin,
                                             ArrayRef<int64_t> args) {
  switch (builtin) {
  case Builtin::Abs: return args[0] < 0 ? -args[0] : args[0];
  case Builtin::Max: return std::max(args[0], args[1]);
  case Builtin::Min: return std::min(args[0], args[1]);
  case Builtin::Select: return args[0] ? args[1] : args[2];
  default: return llvm::None;
  }
}
