//===- ONNXLowering.h - State of one ONNX import (private) ------*- C++ -*-===//
//
// This file declares the Lowering context the ONNX importer's node
// lowerings (ONNXOps.cpp) emit tofu ops through: shapes and dtypes by ONNX
// value name, constant values (initializers and Constant nodes), and
// helpers that add one tofu op and its output tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_GRAPH_ONNX_ONNXLOWERING_H
#define TOFU_LIB_GRAPH_ONNX_ONNXLOWERING_H

#include "tofu/Graph/Graph.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <string>
#include <vector>

namespace tofu {
namespace graph {
namespace onnximport {

struct ConstValue;

/// What the importer knows about one ONNX value.
struct ValueInfo {
  Shape shape;
  DType dtype = DType::F32;
  bool known = false;
};

class Lowering {
public:
  explicit Lowering(Graph &g) : g(g) {}

  /// The ONNX value `name` as a tensor name of the graph (through elided
  /// identities).
  std::string use(StringRef name) const;
  const ValueInfo *getInfo(StringRef name) const;
  /// The contents of a constant value, if it is one.
  bool getConstant(StringRef name, ConstValue &out) const;
  /// The integer / real (one element) contents of a constant value.
  bool getInts(StringRef name, std::vector<int64_t> &out) const;
  bool getReal(StringRef name, double &out) const;
  bool isConstant(StringRef name) const { return constants.count(name); }

  /// Adds op `type` reading `inputs` and producing tensor `output` (a new
  /// activation) of `shape`, grouped under the current node.
  void emit(StringRef type, ArrayRef<std::string> inputs,
            std::vector<std::pair<std::string, ParamValue>> params,
            StringRef output, const Shape &shape, DType dtype);
  /// A fresh name for an intermediate tensor of the current node.
  std::string temp(StringRef suffix);
  /// Makes ONNX value `name` another name of tensor `target`.
  void alias(StringRef name, StringRef target) {
    aliases[name] = use(target);
  }

  Graph &g;
  llvm::StringMap<ValueInfo> values;
  llvm::StringMap<const onnx::TensorProto *> constants;
  /// The constants of Constant nodes (folded values included, not
  /// initializers): a param tensor made of one carries its values
  /// ("value", flattened row-major, as tofu-export writes constants).
  llvm::StringSet<> nodeConstants;
  llvm::StringMap<std::string> aliases;
  std::string group;
};

/// Lowers `node`. Returns false if its op type (or this use of it) is not
/// supported, with the reason in `why`.
bool lowerNode(const onnx::NodeProto &node, Lowering &l, std::string &why);

/// Lowers an RNN, GRU or LSTM node by unrolling it over its time steps
/// (ONNXRecurrent.cpp).
bool lowerRecurrent(const onnx::NodeProto &node, Lowering &l,
                    std::string &why);

/// The tofu dtype of an ONNX element type, if it has one.
bool mapElementType(int elemType, DType &out);

} // namespace onnximport
} // namespace graph
} // namespace tofu

#endif // TOFU_LIB_GRAPH_ONNX_ONNXLOWERING_H
