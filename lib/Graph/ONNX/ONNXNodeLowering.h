//===- ONNXNodeLowering.h - Lowering one ONNX node (private) ---*- C++ -*-===//
//
// This file declares NodeLowering, the state of lowering one ONNX node to
// tofu ops, and the attribute helpers its lowerings share. The lowerings
// are grouped by family: ONNXOps.cpp (arithmetic, shapes, the dispatch),
// ONNXSpatial.cpp (convolution, pooling, resampling), ONNXNormalization.cpp
// (norms, reductions), ONNXActivations.cpp (activation functions).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_GRAPH_ONNX_ONNXNODELOWERING_H
#define TOFU_LIB_GRAPH_ONNX_ONNXNODELOWERING_H

#include "ONNXConstant.h"
#include "ONNXLowering.h"

#include <string>
#include <utility>
#include <vector>

namespace tofu {
namespace graph {
namespace onnximport {

using Params = std::vector<std::pair<std::string, ParamValue>>;

/// The double whose shortest spelling is the shortest spelling of float
/// `f`: ONNX keeps reals as floats, and eps = 1e-5 should stay 1e-05 rather
/// than become 9.999999747378752e-06.
double widen(float f);

int64_t attrInt(const onnx::NodeProto &node, StringRef name, int64_t dflt);
double attrReal(const onnx::NodeProto &node, StringRef name, double dflt);
std::vector<int64_t> attrInts(const onnx::NodeProto &node, StringRef name,
                              std::vector<int64_t> dflt);
/// A string attribute, or `dflt`.
std::string attrString(const onnx::NodeProto &node, StringRef name,
                       StringRef dflt);

inline ParamValue I(int64_t v) { return ParamValue::ofInt(v); }
inline ParamValue R(double v) { return ParamValue::ofReal(v); }

/// The per-node state: the node, its inputs' and output's infos.
struct NodeLowering {
  const onnx::NodeProto &node;
  Lowering &l;
  std::string &why;

  std::string in(int i) const { return l.use(node.input(i)); }
  bool hasInput(int i) const {
    return node.input_size() > i && !node.input(i).empty();
  }
  const ValueInfo &info(int i) const { return *l.getInfo(node.input(i)); }
  const ValueInfo &out() const { return *l.getInfo(node.output(0)); }
  std::string outName() const { return node.output(0); }
  bool fail(const Twine &reason) {
    why = reason.str();
    return false;
  }
  /// `axis` as an index into a shape of `rank` (a negative axis counts from
  /// the end) in `resolved`, or false after failing with "axis A is out of
  /// range".
  bool resolveAxis(int64_t axis, int64_t rank, int64_t &resolved) {
    resolved = axis < 0 ? axis + rank : axis;
    if (resolved >= 0 && resolved < rank)
      return true;
    return fail("axis " + Twine(axis) + " is out of range");
  }

  /// `view` of tensor `x` (shape `from`) to `to`, as `name`; the input if
  /// the shapes are equal.
  std::string view(const std::string &x, const Shape &from, const Shape &to,
                   DType dtype, const std::string &name) {
    if (from == to)
      return x;
    Params params;
    for (unsigned i = 0; i != to.size(); ++i)
      params.emplace_back("size_" + std::to_string(i), I(to[i]));
    l.emit("view", {x}, params, name, to, dtype);
    return name;
  }
  void finishView(const std::string &x, const Shape &from) {
    if (from == out().shape)
      l.alias(outName(), x);
    else
      view(x, from, out().shape, out().dtype, outName());
  }

  bool unary(StringRef type) {
    l.emit(type, {in(0)}, {}, outName(), out().shape, out().dtype);
    return true;
  }
  bool binary(StringRef kind);
  bool gemm();
  bool matmul();
  bool concat();
  std::string sliceAxis(const std::string &x, Shape &shape, int64_t axis,
                        int64_t start, int64_t end, int64_t step,
                        const std::string &name);
  bool slice();
  bool split();
  bool gather();
  bool pad();
  bool clip();
  bool expand();
  bool constantOfShape();
  bool softmax(StringRef type);
  bool transpose();
  bool pow();

  // ONNXSpatial.cpp
  bool conv();
  bool convTranspose();
  bool poolParams(Params &params, unsigned spatial);
  bool maxPool();
  bool avgPool();
  bool globalAveragePool();
  bool resize();
  bool depthToSpace();
  bool spatialPad(StringRef mode, ArrayRef<int64_t> pads);

  // ONNXNormalization.cpp
  bool batchNorm();
  bool layerNorm();
  bool instanceNorm();
  bool reduce(StringRef type);

  // ONNXActivations.cpp
  bool elu(double alpha, double scale);
  bool leakyRelu();
  bool prelu();
  bool softplus();
  bool hardSigmoid();
};


} // namespace onnximport
} // namespace graph
} // namespace tofu

#endif // TOFU_LIB_GRAPH_ONNX_ONNXNODELOWERING_H
