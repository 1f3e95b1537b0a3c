//===- Graph.cpp - The tofu-graph IR --------------------------------------===//
//
// This file implements the Graph IR: dtype and role spellings, name lookup
// and the producer/user tables built by Graph::link.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/Graph.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace tofu;
using namespace tofu::graph;

StringRef graph::getRoleName(Role role) {
  switch (role) {
  case Role::Input:
    return "input";
  case Role::Param:
    return "param";
  case Role::Grad:
    return "grad";
  case Role::Activation:
    return "activation";
  case Role::State:
    return "state";
  case Role::Output:
    return "output";
  case Role::Other:
    return "other";
  }
  return "other";
}

Role graph::lookupRole(StringRef name) {
  return llvm::StringSwitch<Role>(name)
      .Case("input", Role::Input)
      .Case("param", Role::Param)
      .Case("grad", Role::Grad)
      .Case("activation", Role::Activation)
      .Case("state", Role::State)
      .Case("output", Role::Output)
      .Default(Role::Other);
}

int64_t Tensor::getNumBytes() const {
  int64_t bytes = getDTypeSize(dtype);
  for (int64_t d : shape) {
    if (d <= 0)
      return 0;
    if (bytes > std::numeric_limits<int64_t>::max() / d)
      return std::numeric_limits<int64_t>::max();
    bytes *= d;
  }
  return bytes;
}

SMLoc Tensor::getExtraLoc(StringRef key) const {
  for (const ExtraField &field : extras)
    if (field.key == key)
      return field.loc;
  return loc;
}

const ParamValue *Op::lookupParam(StringRef paramName) const {
  for (const auto &param : params)
    if (param.first == paramName)
      return &param.second;
  return nullptr;
}

unsigned Graph::addTensor(Tensor tensor) {
  unsigned index = tensors.size();
  tensorsByName.try_emplace(tensor.name, index);
  tensors.push_back(std::move(tensor));
  return index;
}

unsigned Graph::addOp(Op op) {
  unsigned index = ops.size();
  opsByName.try_emplace(op.name, index);
  ops.push_back(std::move(op));
  return index;
}

int Graph::lookupTensor(StringRef name) const {
  auto it = tensorsByName.find(name);
  return it == tensorsByName.end() ? -1 : int(it->second);
}

int Graph::lookupOp(StringRef name) const {
  auto it = opsByName.find(name);
  return it == opsByName.end() ? -1 : int(it->second);
}

SmallVector<Shape, 4> Graph::getInputShapes(const Op &op) const {
  SmallVector<Shape, 4> shapes;
  for (const TensorRef &ref : op.inputs)
    shapes.push_back(tensors[ref.index].shape);
  return shapes;
}

void Graph::link() {
  producers.assign(tensors.size(), -1);
  users.assign(tensors.size(), {});
  for (unsigned o = 0, e = ops.size(); o != e; ++o) {
    for (TensorRef &ref : ops[o].inputs) {
      ref.index = lookupTensor(ref.name);
      if (ref.index >= 0)
        users[ref.index].push_back(o);
    }
    for (TensorRef &ref : ops[o].outputs) {
      ref.index = lookupTensor(ref.name);
      if (ref.index >= 0 && producers[ref.index] < 0)
        producers[ref.index] = o;
    }
  }
}
