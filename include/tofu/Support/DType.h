//===- DType.h - Tensor element types ---------------------------*- C++ -*-===//
//
// This file declares DType, the element type of a tensor, listed once in
// DTypes.def with its tofu-graph spelling and size. The graph IR records
// it per tensor; the evaluator tags its tensors with it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_DTYPE_H
#define TOFU_SUPPORT_DTYPE_H

#include "tofu/Support/LLVM.h"

#include "llvm/ADT/Optional.h"

namespace tofu {

/// The element type of a tensor (DTypes.def).
enum class DType {
#define TOFU_DTYPE(Id, Name, Bytes) Id,
#include "tofu/Support/DTypes.def"
};

/// The tofu-graph spelling: "f32", "i64", ...
StringRef getDTypeName(DType type);
/// Bytes per element.
unsigned getDTypeSize(DType type);
/// Parses a dtype spelling; None if `name` is not one.
llvm::Optional<DType> lookupDType(StringRef name);
/// True for f16, bf16, f32 and f64.
bool isFloatingPoint(DType type);

} // namespace tofu

#endif // TOFU_SUPPORT_DTYPE_H
