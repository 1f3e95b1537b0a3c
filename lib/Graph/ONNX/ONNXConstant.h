//===- ONNXConstant.h - Constant values and folding (private) ---*- C++ -*-===//
//
// This file declares ConstValue, the value of a constant ONNX tensor as
// the importer computes with it, and the model rewrites that run before
// lowering: constant folding of shape arithmetic (ONNXFold.cpp) and the
// fusion of decomposed operators (ONNXFuse.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_GRAPH_ONNX_ONNXCONSTANT_H
#define TOFU_LIB_GRAPH_ONNX_ONNXCONSTANT_H

#include "tofu/Support/Shape.h"

#include "llvm/ADT/StringRef.h"

#include "onnx/onnx_pb.h"

#include <string>
#include <vector>

namespace tofu {
namespace graph {
namespace onnximport {

/// A constant tensor: integer and boolean element types keep their values
/// in `ints`, real types in `reals` (row-major).
struct ConstValue {
  int elemType = onnx::TensorProto::FLOAT;
  Shape shape;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  static bool isRealType(int elemType);
  bool isReal() const { return isRealType(elemType); }
  size_t size() const { return isReal() ? reals.size() : ints.size(); }
  double getReal(size_t i) const;
  int64_t getInt(size_t i) const;
  /// Makes room for `n` zero elements of the current type.
  void resize(size_t n);
  /// Sets element `i` to `real` (real types) or `integer` (the others).
  void set(size_t i, double real, int64_t integer);
};

/// Reads the value of `t`; false for element types without a ConstValue
/// form (strings, complex, ...), external data, or a size mismatch.
bool readConstant(const onnx::TensorProto &t, ConstValue &out);

/// `c` as a TensorProto named `name` (typed data fields).
onnx::TensorProto writeConstant(const ConstValue &c, StringRef name);

/// Folds every node that computes from constants and static shapes only
/// (Shape, Gather, Unsqueeze, Concat, Equal, Where, ConstantOfShape, Cast,
/// Range, Transpose, integer arithmetic, ...) into a Constant node, re-running ONNX
/// shape inference (with data propagation) until no more folds, so that
/// Reshape/Expand targets and the shapes behind them become static.
/// Returns false with `error` set if shape inference fails.
bool foldConstants(onnx::ModelProto &model, std::string &error);

/// Replaces the exact-GELU decomposition torch.onnx writes
/// (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5) with one node of type
/// `Gelu`. Runs after the last shape inference (onnx 1.12 has no Gelu).
void fuseDecompositions(onnx::GraphProto &graph);

/// The constant value of a Constant node's attributes (value, value_int,
/// value_ints, value_float, value_floats), if it has one.
bool readConstantNode(const onnx::NodeProto &node, ConstValue &out);

/// The attribute `name` of `node`, or null.
const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     StringRef name);

} // namespace onnximport
} // namespace graph
} // namespace tofu

#endif // TOFU_LIB_GRAPH_ONNX_ONNXCONSTANT_H
