//===- Graph.cpp - The tofu-graph IR --------------------------------------===//
//
// This file implements the Graph IR: dtype and role spellings, name lookup,
// the producer/user tables built by Graph::link and the stable topological
// sort of the ops (Graph::sortOps).
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/Graph.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>
#include <queue>
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

bool Graph::sortOps() {
  // Kahn's algorithm taking the earliest ready op in file order each time:
  // the file's order where it is already topological, O(E log V) always.
  unsigned n = ops.size();
  std::vector<SmallVector<unsigned, 2>> readers(n);
  std::vector<unsigned> pending(n, 0);
  for (unsigned o = 0; o != n; ++o)
    for (const TensorRef &ref : ops[o].inputs) {
      int p = ref.index >= 0 ? producers[ref.index] : -1;
      if (p < 0)
        continue;
      if (unsigned(p) == o)
        return false;
      readers[p].push_back(o);
      ++pending[o];
    }
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>>
      ready;
  for (unsigned o = 0; o != n; ++o)
    if (!pending[o])
      ready.push(o);
  std::vector<unsigned> order;
  order.reserve(n);
  while (!ready.empty()) {
    unsigned o = ready.top();
    ready.pop();
    order.push_back(o);
    for (unsigned r : readers[o])
      if (!--pending[r])
        ready.push(r);
  }
  if (order.size() != n)
    return false;
  bool sorted = true;
  for (unsigned i = 0; i != n && sorted; ++i)
    sorted = order[i] == i;
  if (sorted)
    return true;
  std::vector<Op> sortedOps;
  sortedOps.reserve(n);
  for (unsigned o : order)
    sortedOps.push_back(std::move(ops[o]));
  ops = std::move(sortedOps);
  opsByName.clear();
  for (unsigned o = 0; o != n; ++o)
    opsByName.try_emplace(ops[o].name, o);
  link();
  return true;
}
