//===- Tensor.h - Concrete tensors for the TDL evaluator --------*- C++ -*-===//
//
// This file declares Tensor, the value the evaluator reads and writes: a
// row-major array with a Shape and a dtype tag. Every element is stored as a
// double whatever the dtype (f32, f64, i64, i32 and bool values are all
// exactly representable, integers up to 2^53); the tag says how the tensor
// was read and how it is rounded when written out (see Npy.h). Keeping one
// storage type lets the evaluator compute everything in double.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_EVAL_TENSOR_H
#define TOFU_EVAL_TENSOR_H

#include "tofu/Support/DType.h"
#include "tofu/Support/Shape.h"

#include "llvm/ADT/Optional.h"

#include <vector>

namespace tofu {
namespace eval {

/// A dense row-major tensor whose elements are stored as doubles.
class Tensor {
public:
  /// A rank-0 f64 zero.
  Tensor() : Tensor(DType::F64, {}) {}
  /// A zero tensor of `shape`.
  Tensor(DType dtype, ArrayRef<int64_t> shape);

  DType getDType() const { return dtype; }
  void setDType(DType newType) { dtype = newType; }
  ArrayRef<int64_t> getShape() const { return shape; }
  unsigned getRank() const { return shape.size(); }
  int64_t getNumElements() const { return data.size(); }
  /// Row-major strides in elements, one per dimension.
  ArrayRef<int64_t> getStrides() const { return strides; }

  ArrayRef<double> getData() const { return data; }
  llvm::MutableArrayRef<double> getData() { return data; }
  /// The element at `index` (one coordinate per dimension, in bounds).
  double at(ArrayRef<int64_t> index) const;
  double &at(ArrayRef<int64_t> index);

private:
  int64_t offsetOf(ArrayRef<int64_t> index) const;

  DType dtype;
  Shape shape;
  Shape strides;
  std::vector<double> data;
};

} // namespace eval
} // namespace tofu

#endif // TOFU_EVAL_TENSOR_H
