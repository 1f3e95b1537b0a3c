//===- Tensor.cpp - Concrete tensors for the TDL evaluator ----------------===//
//
// This file implements Tensor and the dtype names.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Tensor.h"

#include "llvm/ADT/StringSwitch.h"

#include <cassert>

using namespace tofu;
using namespace tofu::eval;

StringRef eval::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::Bool: return "bool";
  }
  return "?";
}

llvm::Optional<DType> eval::lookupDType(StringRef name) {
  return llvm::StringSwitch<llvm::Optional<DType>>(name)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Case("i64", DType::I64)
      .Case("i32", DType::I32)
      .Case("bool", DType::Bool)
      .Default(llvm::None);
}

bool eval::isFloatingPoint(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64;
}

Tensor::Tensor(DType dtype, ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape.begin(), shape.end()), strides(shape.size()),
      data(tofu::getNumElements(shape), 0.0) {
  int64_t stride = 1;
  for (unsigned d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
}

int64_t Tensor::offsetOf(ArrayRef<int64_t> index) const {
  assert(index.size() == shape.size() && "one coordinate per dimension");
  int64_t offset = 0;
  for (unsigned d = 0, e = index.size(); d != e; ++d) {
    assert(index[d] >= 0 && index[d] < shape[d] && "index out of bounds");
    offset += index[d] * strides[d];
  }
  return offset;
}

double Tensor::at(ArrayRef<int64_t> index) const { return data[offsetOf(index)]; }

double &Tensor::at(ArrayRef<int64_t> index) { return data[offsetOf(index)]; }
