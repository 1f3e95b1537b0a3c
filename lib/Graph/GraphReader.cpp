//===- GraphReader.cpp - Read tofu-graph JSON into the Graph IR -----------===//
//
// This file implements the tofu-graph reader. findJSONSyntaxError checks the
// syntax without building a document; where it finds an error,
// llvm::json::parse decides and words it (its error carries a byte offset,
// which becomes an SMLoc); then the
// reader walks the document's JSONLocations tree, which has the parsed
// value's structure in document order and gives the location of every
// value and the raw text of every number (strings are decoded by
// llvm::json).
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphReader.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/Support/JSONLocations.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <limits>

using namespace tofu;
using namespace tofu::graph;
using Node = JSONLocations::Node;

namespace {

class Reader {
public:
  Reader(DiagnosticEngine &diags, const JSONLocations &locs)
      : diags(diags), locs(locs) {}

  std::unique_ptr<Graph> read();

private:
  SMLoc at(const Node &node) const {
    return SMLoc::getFromPointer(locs.getPointer(node));
  }
  SMLoc atKey(const Node &node) const {
    return SMLoc::getFromPointer(locs.getKeyPointer(node));
  }
  void error(SMLoc loc, const Twine &msg) { diags.error(loc, msg); }

  /// The member `key` of `obj`, or null after reporting it missing when
  /// `required`.
  const Node *member(const Node &obj, StringRef key, const Twine &what,
                     bool required);
  /// The string value of `node`, or None after reporting.
  llvm::Optional<std::string> getString(const Node &node, const Twine &what);
  llvm::Optional<int64_t> getInteger(const Node &node, const Twine &what);

  void readHeader(const Node &root, Graph &g);
  void readTensor(const Node &node, unsigned index, Graph &g);
  bool readShape(const Node &node, const Twine &what, Tensor &t);
  void readOp(const Node &node, unsigned index, Graph &g);
  void readTensorRefs(const Node &node, const Twine &what, StringRef field,
                      llvm::SmallVectorImpl<TensorRef> &refs);
  void readParams(const Node &node, const Twine &what, Op &op);
  void keepExtra(const Node &member, std::vector<ExtraField> &extras) {
    extras.push_back({member.key, compactJSON(locs.getText(member)),
                      atKey(member), at(member)});
  }

  DiagnosticEngine &diags;
  const JSONLocations &locs;
};

/// How a node's JSON type is named in messages.
StringRef describe(const Node &node) {
  switch (node.kind) {
  case Node::Kind::Object: return "an object";
  case Node::Kind::Array: return "an array";
  case Node::Kind::String: return "a string";
  case Node::Kind::Number: return "a number";
  case Node::Kind::Literal: return "a boolean or null";
  }
  return "a value";
}

} // namespace

const Node *Reader::member(const Node &obj, StringRef key, const Twine &what,
                           bool required) {
  const Node *node = locs.getMember(obj, key);
  if (!node && required)
    error(at(obj), what + ": missing field '" + key + "'");
  return node;
}

llvm::Optional<std::string> Reader::getString(const Node &node,
                                              const Twine &what) {
  if (node.kind != Node::Kind::String) {
    error(at(node), what + " must be a string, not " + describe(node));
    return llvm::None;
  }
  StringRef text = locs.getText(node);
  if (!text.contains('\\') && text.size() >= 2)
    return text.drop_front().drop_back().str(); // nothing to decode
  auto value = llvm::json::parse(text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return llvm::None;
  }
  return value->getAsString()->str();
}

llvm::Optional<int64_t> Reader::getInteger(const Node &node,
                                           const Twine &what) {
  StringRef text = locs.getText(node);
  int64_t value;
  if (node.kind != Node::Kind::Number ||
      text.find_first_of(".eE") != StringRef::npos ||
      text.getAsInteger(10, value)) {
    error(at(node), what + " must be an integer, not " +
                        (node.kind == Node::Kind::Number ? Twine("'" + text + "'")
                                                         : describe(node)));
    return llvm::None;
  }
  return value;
}

void Reader::readHeader(const Node &root, Graph &g) {
  if (const Node *format = member(root, "format", "graph", true))
    if (auto name = getString(*format, "'format'"))
      if (*name != "tofu-graph")
        error(at(*format), "unsupported format '" + *name +
                               "' (expected \"tofu-graph\")");
  if (const Node *version = member(root, "version", "graph", true))
    if (auto v = getInteger(*version, "'version'"))
      if (*v != 1)
        error(at(*version), "unsupported version " + Twine(*v) +
                                " (this reader understands version 1)");
  for (uint32_t child : root.children) {
    const Node &m = locs.getNode(child);
    if (m.key != "format" && m.key != "version" && m.key != "tensors" &&
        m.key != "ops")
      keepExtra(m, g.extras);
  }
}

bool Reader::readShape(const Node &node, const Twine &what, Tensor &t) {
  t.shapeLoc = at(node);
  if (node.kind != Node::Kind::Array) {
    error(at(node), what + ": 'shape' must be an array of integers, not " +
                        describe(node));
    return false;
  }
  bool ok = true;
  for (unsigned i = 0, e = node.children.size(); i != e; ++i) {
    const Node &dim = locs.getNode(node.children[i]);
    t.dimLocs.push_back(at(dim));
    auto v = getInteger(dim, what + ": dimension " + Twine(i));
    ok &= bool(v);
    t.shape.push_back(v ? *v : 0);
  }
  return ok;
}

void Reader::readTensor(const Node &node, unsigned index, Graph &g) {
  Tensor t;
  t.loc = at(node);
  if (node.kind != Node::Kind::Object) {
    error(at(node), "tensor " + Twine(index) + " must be an object, not " +
                        describe(node));
    return;
  }
  std::string what = "tensor " + std::to_string(index);
  if (const Node *name = member(node, "name", what, true)) {
    t.nameLoc = at(*name);
    if (auto s = getString(*name, what + ": 'name'")) {
      t.name = *s;
      what = "tensor '" + t.name + "'";
    }
  }
  if (const Node *shape = member(node, "shape", what, true))
    readShape(*shape, what, t);
  if (const Node *dtype = member(node, "dtype", what, true)) {
    t.dtypeLoc = at(*dtype);
    if (auto s = getString(*dtype, what + ": 'dtype'")) {
      if (auto type = lookupDType(*s))
        t.dtype = *type;
      else
        error(at(*dtype), what + ": unknown dtype '" + *s +
                              "' (expected one of f32 f16 bf16 f64 i64 i32 "
                              "i8 bool)");
    }
  }
  if (const Node *role = member(node, "role", what, true)) {
    t.roleLoc = at(*role);
    if (auto s = getString(*role, what + ": 'role'")) {
      t.roleName = *s;
      t.role = lookupRole(*s);
    }
  }
  for (uint32_t child : node.children) {
    const Node &m = locs.getNode(child);
    if (m.key != "name" && m.key != "shape" && m.key != "dtype" &&
        m.key != "role")
      keepExtra(m, t.extras);
  }
  g.addTensor(std::move(t));
}

void Reader::readTensorRefs(const Node &node, const Twine &what,
                            StringRef field, llvm::SmallVectorImpl<TensorRef> &refs) {
  if (node.kind != Node::Kind::Array) {
    error(at(node), what + ": '" + field +
                        "' must be an array of tensor names, not " +
                        describe(node));
    return;
  }
  for (unsigned i = 0, e = node.children.size(); i != e; ++i) {
    const Node &elt = locs.getNode(node.children[i]);
    auto name = getString(elt, what + ": " + field + "[" + Twine(i) + "]");
    refs.push_back({name ? *name : std::string(), -1, at(elt)});
  }
}

void Reader::readParams(const Node &node, const Twine &what, Op &op) {
  op.paramsLoc = at(node);
  if (node.kind != Node::Kind::Object) {
    error(at(node), what + ": 'params' must be an object, not " +
                        describe(node));
    return;
  }
  for (uint32_t child : node.children) {
    const Node &m = locs.getNode(child);
    std::string paramWhat = (what + ": param '" + m.key + "'").str();
    ParamValue value;
    StringRef text = locs.getText(m);
    if (m.kind == Node::Kind::Number) {
      int64_t i;
      if (text.find_first_of(".eE") == StringRef::npos &&
          !text.getAsInteger(10, i)) {
        value = ParamValue::ofInt(i);
      } else {
        double d;
        if (text.getAsDouble(d) || !std::isfinite(d)) {
          error(at(m), paramWhat + ": '" + text +
                           "' is out of range for a 64-bit integer or real");
          continue;
        }
        value = ParamValue::ofReal(d);
      }
    } else if (text == "\"inf\"" || text == "\"-inf\"" || text == "\"nan\"") {
      double inf = std::numeric_limits<double>::infinity();
      value = ParamValue::ofReal(text == "\"nan\"" ? std::nan("")
                                  : text == "\"inf\"" ? inf
                                                      : -inf);
    } else {
      error(at(m), paramWhat + " must be a number (or \"inf\", \"-inf\", "
                               "\"nan\"), not " + describe(m));
      continue;
    }
    op.params.emplace_back(m.key, value);
    op.paramLocs.push_back(at(m));
  }
}

void Reader::readOp(const Node &node, unsigned index, Graph &g) {
  Op op;
  op.loc = at(node);
  if (node.kind != Node::Kind::Object) {
    error(at(node), "op " + Twine(index) + " must be an object, not " +
                        describe(node));
    return;
  }
  std::string what = "op " + std::to_string(index);
  if (const Node *name = member(node, "name", what, true)) {
    op.nameLoc = at(*name);
    if (auto s = getString(*name, what + ": 'name'")) {
      op.name = *s;
      what = "op '" + op.name + "'";
    }
  }
  if (const Node *type = member(node, "type", what, true)) {
    op.typeLoc = at(*type);
    if (auto s = getString(*type, what + ": 'type'"))
      op.type = *s;
  }
  if (const Node *inputs = member(node, "inputs", what, true)) {
    op.inputsLoc = at(*inputs);
    readTensorRefs(*inputs, what, "inputs", op.inputs);
  }
  if (const Node *outputs = member(node, "outputs", what, true)) {
    op.outputsLoc = at(*outputs);
    readTensorRefs(*outputs, what, "outputs", op.outputs);
  }
  if (const Node *params = member(node, "params", what, false))
    readParams(*params, what, op);
  if (const Node *group = member(node, "group", what, false)) {
    op.groupLoc = at(*group);
    if (auto s = getString(*group, what + ": 'group'")) {
      op.group = *s;
      op.hasGroup = true;
    }
  }
  for (uint32_t child : node.children) {
    const Node &m = locs.getNode(child);
    if (m.key != "name" && m.key != "type" && m.key != "inputs" &&
        m.key != "outputs" && m.key != "params" && m.key != "group")
      keepExtra(m, op.extras);
  }
  g.addOp(std::move(op));
}

std::unique_ptr<Graph> Reader::read() {
  const Node &root = locs.getRoot();
  auto g = std::make_unique<Graph>();
  g->loc = at(root);
  if (root.kind != Node::Kind::Object) {
    error(at(root), "a tofu-graph must be a JSON object, not " +
                        describe(root));
    return nullptr;
  }
  readHeader(root, *g);
  const Node *tensors = member(root, "tensors", "graph", true);
  const Node *ops = member(root, "ops", "graph", true);
  g->reserve(tensors ? tensors->children.size() : 0,
             ops ? ops->children.size() : 0);
  if (tensors) {
    g->tensorsLoc = at(*tensors);
    if (tensors->kind != Node::Kind::Array)
      error(at(*tensors), "'tensors' must be an array, not " +
                              describe(*tensors));
    else
      for (unsigned i = 0, e = tensors->children.size(); i != e; ++i)
        readTensor(locs.getNode(tensors->children[i]), i, *g);
  }
  if (ops) {
    g->opsLoc = at(*ops);
    if (ops->kind != Node::Kind::Array)
      error(at(*ops), "'ops' must be an array, not " + describe(*ops));
    else
      for (unsigned i = 0, e = ops->children.size(); i != e; ++i)
        readOp(locs.getNode(ops->children[i]), i, *g);
  }
  g->link();
  // Every tool takes the ops in this order (the planner, the plan's op
  // list, the lowering, the kernels): sorted once here. A cycle leaves the
  // file's order for the verifier to report.
  g->sortOps();
  return g;
}

std::unique_ptr<Graph> graph::readGraph(unsigned bufferId,
                                        DiagnosticEngine &diags) {
  const llvm::MemoryBuffer &buf =
      *diags.getSourceMgr().getMemoryBuffer(bufferId);
  auto locs = scanJSONDocument(buf.getBuffer(), diags);
  if (!locs)
    return nullptr;
  unsigned errorsBefore = diags.getNumErrors();
  std::unique_ptr<Graph> g = Reader(diags, *locs).read();
  if (diags.getNumErrors() != errorsBefore)
    return nullptr;
  return g;
}

std::unique_ptr<Graph> graph::readGraphFile(StringRef path,
                                            DiagnosticEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    diags.error(SMLoc(), "cannot read '" + path + "': " +
                             buf.getError().message());
    return nullptr;
  }
  unsigned id =
      diags.getSourceMgr().AddNewSourceBuffer(std::move(*buf), SMLoc());
  return readGraph(id, diags);
}
