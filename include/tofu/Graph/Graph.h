//===- Graph.h - The tofu-graph IR ------------------------------*- C++ -*-===//
//
// This file declares the in-memory form of a tofu-graph (docs/GraphFormat.md):
// a Graph owns Tensors and Ops, both addressed by dense index and looked up
// by name. A Tensor has a shape, an element type, a role (one of the roles
// of the format, or free text that is kept verbatim); an Op has a type
// naming a TDL operator, input and output tensor references, named params
// (integers or reals), an optional forward/backward group, and any fields
// the format does not define, kept as JSON text so that a graph written back
// is the graph read. Every node remembers where it came from in the source
// (SMLocs) so that diagnostics point at the JSON; graphs built in memory
// (the ONNX importer, tests) have no locations.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_GRAPH_H
#define TOFU_GRAPH_GRAPH_H

#include "tofu/Support/DType.h"
#include "tofu/Support/LLVM.h"
#include "tofu/Support/Shape.h"
#include "tofu/TDL/ParamValue.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tofu {
namespace graph {

/// The role of a tensor in the training step. `Other` is free text, kept in
/// Tensor::getRoleName().
enum class Role { Input, Param, Grad, Activation, State, Output, Other };

/// "input", "param", ...; "other" for Role::Other.
StringRef getRoleName(Role role);
/// The role spelled `name`, Role::Other for free text.
Role lookupRole(StringRef name);
/// True for the roles a graph input (a tensor no op produces) may have.
inline bool isGraphInputRole(Role role) {
  return role == Role::Input || role == Role::Param || role == Role::State;
}

/// One named param value of an op: an integer or a real (JSON `1` vs `1.0`,
/// `1e-5`; the strings "inf", "-inf" and "nan" are reals).
using tdl::ParamValue;

/// A field the format does not define, kept verbatim: its key and its value
/// as compact JSON text (`", "` and `": "` separators).
struct ExtraField {
  std::string key;
  std::string json;
  /// Where the key and the value are in the JSON.
  SMLoc loc, valueLoc;
  bool operator==(const ExtraField &rhs) const {
    return key == rhs.key && json == rhs.json;
  }
};

/// A use of a tensor by name (an op's input or output), resolved to the
/// tensor's index by Graph::link; -1 when no tensor has the name.
struct TensorRef {
  std::string name;
  int index = -1;
  SMLoc loc;
};

/// A tensor of the graph.
class Tensor {
public:
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  Role role = Role::Activation;
  /// The role as written (differs from getRoleName(role) for Role::Other).
  std::string roleName = "activation";
  std::vector<ExtraField> extras;

  /// Where the tensor's object, name, shape, dtype and role are in the JSON.
  SMLoc loc, nameLoc, shapeLoc, dtypeLoc, roleLoc;
  /// Location of each dimension of the shape (may be empty).
  SmallVector<SMLoc, 4> dimLocs;

  StringRef getName() const { return name; }
  int64_t getNumElements() const { return tofu::getNumElements(shape); }
  /// Bytes of the tensor's elements (saturating at INT64_MAX).
  int64_t getNumBytes() const;
  /// The location of an extra field, or the tensor's.
  SMLoc getExtraLoc(StringRef key) const;
};

/// An op of the graph: one TDL operator applied to tensors.
class Op {
public:
  std::string name;
  std::string type;
  SmallVector<TensorRef, 3> inputs;
  /// The format lists outputs; a valid graph has exactly one.
  SmallVector<TensorRef, 1> outputs;
  /// Named params in source order.
  std::vector<std::pair<std::string, ParamValue>> params;
  /// The forward call a backward op belongs to; empty if absent.
  std::string group;
  bool hasGroup = false;
  std::vector<ExtraField> extras;

  SMLoc loc, nameLoc, typeLoc, inputsLoc, outputsLoc, paramsLoc, groupLoc;
  /// Location of each param's value, by position in `params`.
  SmallVector<SMLoc, 4> paramLocs;

  StringRef getName() const { return name; }
  /// The output tensor's index (the first output; -1 if none or unknown).
  int getOutput() const { return outputs.empty() ? -1 : outputs[0].index; }
  /// The param named `name`, or null.
  const ParamValue *lookupParam(StringRef name) const;
};

/// A training graph.
class Graph {
public:
  /// Adds a tensor / op and returns its index. Names are not checked here
  /// (the verifier reports duplicates); lookup finds the first.
  unsigned addTensor(Tensor tensor);
  unsigned addOp(Op op);
  /// Room for this many tensors and ops, so that adding them moves none.
  void reserve(unsigned numTensors, unsigned numOps) {
    tensors.reserve(numTensors);
    ops.reserve(numOps);
  }

  ArrayRef<Tensor> getTensors() const { return tensors; }
  ArrayRef<Op> getOps() const { return ops; }
  Tensor &getTensor(unsigned i) { return tensors[i]; }
  const Tensor &getTensor(unsigned i) const { return tensors[i]; }
  Op &getOp(unsigned i) { return ops[i]; }
  const Op &getOp(unsigned i) const { return ops[i]; }
  unsigned getNumTensors() const { return tensors.size(); }
  unsigned getNumOps() const { return ops.size(); }

  /// Index of the (first) tensor / op named `name`, or -1.
  int lookupTensor(StringRef name) const;
  int lookupOp(StringRef name) const;
  /// The shapes of `op`'s inputs, in order (its references resolved).
  SmallVector<Shape, 4> getInputShapes(const Op &op) const;

  /// Resolves every TensorRef to a tensor index (-1 if unknown) and records
  /// each tensor's producer and users. Call after building or editing.
  void link();
  /// The op producing tensor `t` (the first, if several do), or -1.
  int getProducer(unsigned t) const { return producers[t]; }
  /// The ops reading tensor `t`, in op order (an op reading it twice
  /// appears twice).
  ArrayRef<unsigned> getUsers(unsigned t) const { return users[t]; }

  /// Reorders the ops so that each comes after the producers of its inputs
  /// (docs/GraphFormat.md, "Op order"): stable, so an order that is
  /// already valid is kept and otherwise each op stays as early as its
  /// inputs allow; then links again. Returns false and changes nothing if
  /// ops depend on each other through a cycle (the verifier names it).
  /// Expects a linked graph; the reader calls it on every graph it reads.
  bool sortOps();

  /// Top-level fields other than format, version, tensors and ops
  /// (e.g. `metadata`), in source order.
  std::vector<ExtraField> extras;
  /// Where the document's `tensors` and `ops` arrays are.
  SMLoc loc, tensorsLoc, opsLoc;

private:
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  llvm::StringMap<unsigned> tensorsByName;
  llvm::StringMap<unsigned> opsByName;
  std::vector<int> producers;
  std::vector<std::vector<unsigned>> users;
};

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_GRAPH_H
