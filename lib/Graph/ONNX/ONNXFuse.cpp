//===- ONNXFuse.cpp - Fuse decomposed operators of an ONNX model ----------===//
//
// This file implements the fusion of operator decompositions exporters
// write back into one node the importer lowers to one library op:
// torch.onnx writes the exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), as
// Div -> Erf -> Add -> Mul -> Mul, and the library has `gelu` but no `erf`.
//
//===----------------------------------------------------------------------===//

#include "ONNXConstant.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

namespace {

class Fuser {
public:
  explicit Fuser(onnx::GraphProto &graph);

  /// Rewrites every GELU decomposition; returns the number rewritten.
  unsigned fuseGelu();

private:
  /// The index of the node producing `name` if that node's type is `type`
  /// and `name` has no other use (and is not a graph output); else -1.
  int soleProducer(StringRef name, StringRef type) const;
  bool isScalar(StringRef name, double value) const;
  /// For a commutative binary node with a scalar operand equal to `value`,
  /// the other operand.
  std::string otherOperand(const onnx::NodeProto &node, double value) const;

  onnx::GraphProto &graph;
  llvm::StringMap<double> scalars;
  llvm::StringMap<int> producers;
  llvm::StringMap<unsigned> uses;
};

} // namespace

Fuser::Fuser(onnx::GraphProto &graph) : graph(graph) {
  for (const auto &init : graph.initializer()) {
    ConstValue c;
    if (init.dims_size() <= 1 && readConstant(init, c) && c.size() == 1)
      scalars[init.name()] = c.getReal(0);
  }
  for (int i = 0; i != graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    ConstValue c;
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        readConstantNode(node, c) && c.size() == 1)
      scalars[node.output(0)] = c.getReal(0);
    for (const std::string &out : node.output())
      producers[out] = i;
    for (const std::string &in : node.input())
      ++uses[in];
  }
  for (const auto &out : graph.output())
    ++uses[out.name()];
}

int Fuser::soleProducer(StringRef name, StringRef type) const {
  auto it = producers.find(name);
  if (it == producers.end() || uses.lookup(name) != 1 ||
      graph.node(it->second).op_type() != type)
    return -1;
  return it->second;
}

bool Fuser::isScalar(StringRef name, double value) const {
  auto it = scalars.find(name);
  return it != scalars.end() &&
         std::fabs(it->second - value) <= 1e-6 * std::fabs(value);
}

std::string Fuser::otherOperand(const onnx::NodeProto &node,
                                double value) const {
  if (node.input_size() != 2)
    return "";
  if (isScalar(node.input(1), value))
    return node.input(0);
  if (isScalar(node.input(0), value))
    return node.input(1);
  return "";
}

unsigned Fuser::fuseGelu() {
  std::vector<bool> dead(graph.node_size(), false);
  unsigned fused = 0;
  for (int i = 0; i != graph.node_size(); ++i) {
    onnx::NodeProto &last = *graph.mutable_node(i);
    if (last.op_type() != "Mul")
      continue;
    // last = Mul(prod, 0.5), prod = Mul(x, plus), plus = Add(erf, 1),
    // erf = Erf(div), div = Div(x, sqrt 2).
    int prod = soleProducer(otherOperand(last, 0.5), "Mul");
    if (prod < 0)
      continue;
    const onnx::NodeProto &prodNode = graph.node(prod);
    if (prodNode.input_size() != 2)
      continue;
    for (int side = 0; side != 2; ++side) {
      const std::string &x = prodNode.input(side);
      int plus = soleProducer(prodNode.input(1 - side), "Add");
      if (plus < 0)
        continue;
      int erf = soleProducer(otherOperand(graph.node(plus), 1.0), "Erf");
      if (erf < 0 || graph.node(erf).input_size() != 1)
        continue;
      int div = soleProducer(graph.node(erf).input(0), "Div");
      if (div < 0 || graph.node(div).input_size() != 2 ||
          graph.node(div).input(0) != x ||
          !isScalar(graph.node(div).input(1), std::sqrt(2.0)))
        continue;
      dead[prod] = dead[plus] = dead[erf] = dead[div] = true;
      last.set_op_type("Gelu");
      last.clear_input();
      last.add_input(x);
      ++fused;
      break;
    }
  }
  if (fused) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i != graph.node_size(); ++i)
      if (!dead[i])
        *kept.Add() = graph.node(i);
    graph.mutable_node()->Swap(&kept);
  }
  return fused;
}

void onnximport::fuseDecompositions(onnx::GraphProto &graph) {
  Fuser(graph).fuseGelu();
}
