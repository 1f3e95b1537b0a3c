//===- LLVM.h - Import common LLVM types into the tofu namespace -*- C++ -*-===//
//
// This file imports the LLVM ADT and Support types used throughout Tofu so
// that they can be named without the `llvm::` prefix, as MLIR does.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_LLVM_H
#define TOFU_SUPPORT_LLVM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

namespace tofu {
using llvm::ArrayRef;
using llvm::cast;
using llvm::cast_or_null;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using llvm::SMLoc;
using llvm::SMRange;
using llvm::StringRef;
using llvm::Twine;
} // namespace tofu

#endif // TOFU_SUPPORT_LLVM_H
