//===- Tensor.cpp - Concrete tensors for the TDL evaluator ----------------===//
//
// This file implements Tensor.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Tensor.h"


#include <cassert>

using namespace tofu;
using namespace tofu::eval;

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
