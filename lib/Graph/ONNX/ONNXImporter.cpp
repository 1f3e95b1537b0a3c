//===- ONNXImporter.cpp - ONNX inference graphs into the Graph IR ---------===//
//
// This file implements the driver of the ONNX import: it parses the model,
// folds its shape arithmetic under ONNX shape inference with data
// propagation (ONNXFold.cpp), fuses decompositions (ONNXFuse.cpp), records
// every value's shape and dtype and every constant, lowers the nodes in
// order (ONNXOps.cpp, ONNXRecurrent.cpp), and assigns roles. Unsupported
// nodes are collected and reported in one error.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphWriter.h"
#include "tofu/Graph/ONNXImporter.h"
#include "tofu/Support/Diagnostics.h"

#include "ONNXConstant.h"
#include "ONNXLowering.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <map>

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

namespace {

class Importer {
public:
  Importer(StringRef path, DiagnosticEngine &diags)
      : path(path.str()), diags(diags) {}

  std::unique_ptr<Graph> run();

private:
  bool load();
  bool recordValue(const onnx::ValueInfoProto &info);
  bool recordValues();
  void addGraphInputs();
  bool lowerNodes(Lowering &l);
  void error(const Twine &msg) { diags.error(SMLoc(), path + ": " + msg); }

  std::string path;
  DiagnosticEngine &diags;
  onnx::ModelProto model;
  std::unique_ptr<Graph> g = std::make_unique<Graph>();
  Lowering *lowering = nullptr;
};

} // namespace

bool onnximport::mapElementType(int elemType, DType &out) {
  switch (elemType) {
  case onnx::TensorProto::FLOAT: out = DType::F32; return true;
  case onnx::TensorProto::FLOAT16: out = DType::F16; return true;
  case onnx::TensorProto::BFLOAT16: out = DType::BF16; return true;
  case onnx::TensorProto::DOUBLE: out = DType::F64; return true;
  case onnx::TensorProto::INT64: out = DType::I64; return true;
  case onnx::TensorProto::INT32: out = DType::I32; return true;
  case onnx::TensorProto::INT8: out = DType::I8; return true;
  case onnx::TensorProto::BOOL: out = DType::Bool; return true;
  default: return false;
  }
}

bool Importer::load() {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error("cannot read the model");
    return false;
  }
  if (!model.ParseFromIstream(&in)) {
    error("not an ONNX model (the protobuf does not parse)");
    return false;
  }
  // ONNX shape inference divides by these without checking them.
  for (const auto &node : model.graph().node())
    for (const auto &attr : node.attribute())
      if (llvm::is_contained(
              ArrayRef<StringRef>{"strides", "dilations", "kernel_shape",
                                  "group"},
              attr.name()) &&
          (llvm::any_of(attr.ints(), [](int64_t v) { return v <= 0; }) ||
           (attr.name() == "group" && attr.i() <= 0))) {
        error("node '" + node.name() + "' (" + node.op_type() +
              "): attribute '" + attr.name() + "' must be positive");
        return false;
      }
  std::string why;
  if (!foldConstants(model, why)) {
    error("ONNX shape inference failed: " + why);
    return false;
  }
  fuseDecompositions(*model.mutable_graph());
  return true;
}

bool Importer::recordValue(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type())
    return true;
  const auto &type = info.type().tensor_type();
  ValueInfo v;
  if (!mapElementType(type.elem_type(), v.dtype)) {
    error("value '" + info.name() + "' has an element type (" +
          Twine(type.elem_type()) + ") tofu-graph has no dtype for");
    return false;
  }
  if (!type.has_shape())
    return true;
  for (const auto &dim : type.shape().dim()) {
    if (!dim.has_dim_value()) {
      error("value '" + info.name() + "' has a symbolic dimension ('" +
            dim.dim_param() + "'); export the model with static shapes");
      return false;
    }
    v.shape.push_back(dim.dim_value());
  }
  v.known = true;
  lowering->values[info.name()] = v;
  return true;
}

bool Importer::recordValues() {
  const onnx::GraphProto &graph = model.graph();
  bool ok = true;
  for (const auto &init : graph.initializer()) {
    ValueInfo v;
    ok &= mapElementType(init.data_type(), v.dtype);
    v.shape.assign(init.dims().begin(), init.dims().end());
    v.known = true;
    lowering->values[init.name()] = v;
    lowering->constants[init.name()] = &init;
  }
  for (const auto &info : graph.input())
    ok &= recordValue(info);
  for (const auto &info : graph.value_info())
    ok &= recordValue(info);
  for (const auto &info : graph.output())
    ok &= recordValue(info);
  for (const auto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1)
      for (const auto &attr : node.attribute())
        if (attr.name() == "value" && attr.has_t()) {
          lowering->constants[node.output(0)] = &attr.t();
          lowering->nodeConstants.insert(node.output(0));
          ValueInfo v;
          mapElementType(attr.t().data_type(), v.dtype);
          v.shape.assign(attr.t().dims().begin(), attr.t().dims().end());
          v.known = true;
          lowering->values[node.output(0)] = v;
        }
  return ok;
}

bool Importer::lowerNodes(Lowering &l) {
  // Unsupported op type -> (nodes, first node, why).
  std::map<std::string, std::tuple<unsigned, std::string, std::string>> bad;
  for (const auto &node : model.graph().node()) {
    if (node.op_type() == "Constant")
      continue;
    l.group = node.name().empty() ? node.output(0) : node.name();
    std::string why;
    if (lowerNode(node, l, why))
      continue;
    auto &entry = bad[node.op_type()];
    if (std::get<0>(entry)++ == 0) {
      std::get<1>(entry) = l.group;
      std::get<2>(entry) = why;
    }
  }
  if (bad.empty())
    return true;
  std::string list;
  for (const auto &[type, entry] : bad)
    list += "\n  " + type + ": " + std::to_string(std::get<0>(entry)) +
            (std::get<0>(entry) == 1 ? " node" : " nodes") + ", first '" +
            std::get<1>(entry) + "'" +
            (std::get<2>(entry).empty() ? "" : " (" + std::get<2>(entry) + ")");
  error("cannot import " + Twine(bad.size()) +
        (bad.size() == 1 ? " ONNX operator type:" : " ONNX operator types:") +
        list);
  return false;
}

std::unique_ptr<Graph> Importer::run() {
  if (!load())
    return nullptr;
  Lowering l(*g);
  lowering = &l;
  if (!recordValues() || !lowerNodes(l))
    return nullptr;
  // Roles: graph outputs are outputs.
  g->link();
  for (const auto &info : model.graph().output()) {
    int t = g->lookupTensor(l.use(info.name()));
    if (t >= 0 && g->getProducer(t) >= 0) {
      g->getTensor(t).role = Role::Output;
      g->getTensor(t).roleName = "output";
    }
  }
  std::string metadata;
  llvm::raw_string_ostream os(metadata);
  os << "{\"tool\": \"tofu-graph\", \"onnx_producer\": ";
  writeJSONString(os, model.producer_name());
  os << ", \"opset\": "
     << (model.opset_import_size() ? model.opset_import(0).version() : 0)
     << '}';
  g->extras.push_back({"metadata", os.str(), SMLoc()});
  return std::move(g);
}

std::unique_ptr<Graph> graph::importONNXFile(StringRef path,
                                             DiagnosticEngine &diags) {
  return Importer(path, diags).run();
}
