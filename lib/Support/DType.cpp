//===- DType.cpp - Tensor element types -----------------------------------===//
//
// This file implements the DType queries from DTypes.def.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/DType.h"

using namespace tofu;

StringRef tofu::getDTypeName(DType type) {
  switch (type) {
#define TOFU_DTYPE(Id, Name, Bytes)                                            \
  case DType::Id:                                                              \
    return Name;
#include "tofu/Support/DTypes.def"
  }
  return "?";
}

unsigned tofu::getDTypeSize(DType type) {
  switch (type) {
#define TOFU_DTYPE(Id, Name, Bytes)                                            \
  case DType::Id:                                                              \
    return Bytes;
#include "tofu/Support/DTypes.def"
  }
  return 0;
}

llvm::Optional<DType> tofu::lookupDType(StringRef name) {
#define TOFU_DTYPE(Id, Name, Bytes)                                            \
  if (name == Name)                                                            \
    return DType::Id;
#include "tofu/Support/DTypes.def"
  return llvm::None;
}

bool tofu::isFloatingPoint(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32 ||
         type == DType::F64;
}
