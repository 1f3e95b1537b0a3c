//===- VerifyStructure.cpp - Names and dataflow of a graph ----------------===//
//
// This file implements the structural half of the graph verifier: names,
// dimensions, op outputs, producers and graph inputs, and cycles (one pass
// of Tarjan's strongly connected components, linear in the graph).
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/Verifier.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <string>

using namespace tofu;
using namespace tofu::graph;

namespace {

class StructureVerifier {
public:
  StructureVerifier(const Graph &g, DiagnosticEngine &diags)
      : g(g), diags(diags) {}

  void run() {
    checkTensors();
    checkOps();
    checkProducers();
    checkCycles();
  }

private:
  void checkTensors();
  void checkOps();
  void checkRefs(const Op &op, ArrayRef<TensorRef> refs, StringRef kind);
  void checkProducers();
  void checkCycles();
  void reportCycle(unsigned start, ArrayRef<SmallVector<unsigned, 2>> edges,
                   ArrayRef<unsigned> component, unsigned componentSize);

  const Graph &g;
  DiagnosticEngine &diags;
};

} // namespace

void StructureVerifier::checkTensors() {
  for (unsigned i = 0, e = g.getNumTensors(); i != e; ++i) {
    const Tensor &t = g.getTensor(i);
    if (t.name.empty())
      diags.error(t.nameLoc, "tensor " + Twine(i) + " has an empty name");
    int first = g.lookupTensor(t.name);
    if (first != int(i)) {
      diags.error(t.nameLoc, "duplicate tensor name '" + t.name + "'");
      diags.note(g.getTensor(first).nameLoc, "tensor '" + t.name +
                                                 "' first defined here");
    }
    for (unsigned d = 0, n = t.shape.size(); d != n; ++d)
      if (t.shape[d] < 0)
        diags.error(d < t.dimLocs.size() ? t.dimLocs[d] : t.shapeLoc,
                    "tensor '" + t.name + "': dimension " + Twine(d) +
                        " is negative (" + Twine(t.shape[d]) + ")");
  }
}

void StructureVerifier::checkRefs(const Op &op, ArrayRef<TensorRef> refs,
                                  StringRef kind) {
  for (unsigned i = 0, e = refs.size(); i != e; ++i)
    if (refs[i].index < 0)
      diags.error(refs[i].loc, "op '" + op.name + "': " + kind + " " +
                                   Twine(i) + " '" + refs[i].name +
                                   "' is not a tensor of the graph");
}

void StructureVerifier::checkOps() {
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    const Op &op = g.getOp(i);
    if (op.name.empty())
      diags.error(op.nameLoc, "op " + Twine(i) + " has an empty name");
    int first = g.lookupOp(op.name);
    if (first != int(i)) {
      diags.error(op.nameLoc, "duplicate op name '" + op.name + "'");
      diags.note(g.getOp(first).nameLoc,
                 "op '" + op.name + "' first defined here");
    }
    if (op.outputs.size() != 1)
      diags.error(op.outputsLoc.isValid() ? op.outputsLoc : op.loc,
                  "op '" + op.name + "' must have exactly one output, not " +
                      Twine(op.outputs.size()));
    checkRefs(op, op.inputs, "input");
    checkRefs(op, op.outputs, "output");
  }
}

void StructureVerifier::checkProducers() {
  for (unsigned o = 0, e = g.getNumOps(); o != e; ++o) {
    const Op &op = g.getOp(o);
    for (const TensorRef &ref : op.outputs) {
      if (ref.index < 0)
        continue;
      const Tensor &t = g.getTensor(ref.index);
      int first = g.getProducer(ref.index);
      if (first != int(o)) {
        const Op &other = g.getOp(first);
        diags.error(ref.loc, "tensor '" + t.name + "' is produced by op '" +
                                 op.name + "' and by op '" + other.name +
                                 "'");
        diags.note(other.loc, "op '" + other.name + "' is here");
      } else if (isGraphInputRole(t.role)) {
        diags.error(ref.loc, "op '" + op.name + "' produces tensor '" +
                                 t.name + "' of role '" + t.roleName +
                                 "'; graph inputs (input, param, state) are "
                                 "not produced by ops");
        diags.note(t.roleLoc, "tensor '" + t.name + "' has its role here");
      }
    }
  }
  for (unsigned i = 0, e = g.getNumTensors(); i != e; ++i) {
    const Tensor &t = g.getTensor(i);
    if (g.getProducer(i) < 0 && !isGraphInputRole(t.role) &&
        g.lookupTensor(t.name) == int(i))
      diags.error(t.nameLoc, "tensor '" + t.name + "' (role '" + t.roleName +
                                 "') is produced by no op; only tensors of "
                                 "role input, param or state are graph "
                                 "inputs");
  }
}

namespace {

/// The ops each op reads the outputs of (its producers), the edges of the
/// cycle check.
std::vector<SmallVector<unsigned, 2>> getProducerEdges(const Graph &g) {
  std::vector<SmallVector<unsigned, 2>> edges(g.getNumOps());
  for (unsigned o = 0, n = g.getNumOps(); o != n; ++o)
    for (const TensorRef &ref : g.getOp(o).inputs) {
      int p = ref.index < 0 ? -1 : g.getProducer(ref.index);
      if (p >= 0)
        edges[o].push_back(p);
    }
  return edges;
}

/// Tarjan's strongly connected components over `edges`, iterative so that a
/// long chain cannot overflow the stack. Returns each node's component id;
/// `numComponents` is set to their number.
std::vector<unsigned>
findComponents(ArrayRef<SmallVector<unsigned, 2>> edges,
               unsigned &numComponents) {
  const unsigned unvisited = ~0u;
  unsigned n = edges.size(), counter = 0;
  std::vector<unsigned> index(n, unvisited), low(n, 0), component(n, 0);
  std::vector<bool> onStack(n, false);
  std::vector<unsigned> stack;
  // The depth-first search's own stack: a node and its next edge.
  std::vector<std::pair<unsigned, unsigned>> frames;
  numComponents = 0;
  auto visit = [&](unsigned v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    onStack[v] = true;
    frames.push_back({v, 0});
  };
  for (unsigned root = 0; root != n; ++root) {
    if (index[root] != unvisited)
      continue;
    visit(root);
    while (!frames.empty()) {
      unsigned v = frames.back().first;
      if (frames.back().second < edges[v].size()) {
        unsigned w = edges[v][frames.back().second++];
        if (index[w] == unvisited)
          visit(w);
        else if (onStack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      frames.pop_back();
      if (!frames.empty()) {
        unsigned parent = frames.back().first;
        low[parent] = std::min(low[parent], low[v]);
      }
      if (low[v] != index[v])
        continue;
      unsigned w;
      do {
        w = stack.back();
        stack.pop_back();
        onStack[w] = false;
        component[w] = numComponents;
      } while (w != v);
      ++numComponents;
    }
  }
  return component;
}

} // namespace

void StructureVerifier::checkCycles() {
  // One pass of Tarjan's algorithm: an op is on a cycle iff its strongly
  // connected component has more than one op or it reads its own output.
  // Each such component is reported once, at its first op.
  std::vector<SmallVector<unsigned, 2>> edges = getProducerEdges(g);
  unsigned numComponents;
  std::vector<unsigned> component = findComponents(edges, numComponents);
  std::vector<unsigned> size(numComponents, 0);
  for (unsigned c : component)
    ++size[c];
  std::vector<bool> reported(numComponents, false);
  for (unsigned o = 0, n = g.getNumOps(); o != n && !diags.shouldStop(); ++o) {
    unsigned c = component[o];
    if (reported[c] || (size[c] == 1 && !llvm::is_contained(edges[o], o)))
      continue;
    reported[c] = true;
    reportCycle(o, edges, component, size[c]);
  }
}

void StructureVerifier::reportCycle(unsigned start,
                                    ArrayRef<SmallVector<unsigned, 2>> edges,
                                    ArrayRef<unsigned> component,
                                    unsigned componentSize) {
  // The shortest cycle through `start`: a breadth-first search along
  // producer edges within its component, back to `start`.
  unsigned c = component[start];
  std::vector<unsigned> queue{start};
  llvm::DenseMap<unsigned, unsigned> parent{{start, start}};
  unsigned last = start;
  for (size_t head = 0; head != queue.size(); ++head) {
    unsigned v = queue[head];
    if (llvm::is_contained(edges[v], start)) {
      last = v;
      break;
    }
    for (unsigned w : edges[v])
      if (component[w] == c && parent.try_emplace(w, v).second)
        queue.push_back(w);
  }
  // start reads ..., which reads `last`, which reads start; in dataflow
  // order the cycle is start, last, ..., the op start reads.
  std::vector<unsigned> cycle{start};
  for (unsigned v = last; v != start; v = parent[v])
    cycle.push_back(v);
  std::string text;
  for (unsigned o : cycle)
    text += "'" + g.getOp(o).name + "' -> ";
  text += "'" + g.getOp(start).name + "'";
  const Op &first = g.getOp(start);
  diags.error(first.loc, "op '" + first.name + "' is on a cycle: " + text);
  if (componentSize == cycle.size())
    return;
  // The component has more ops than this cycle: name them (a few).
  const unsigned maxNames = 8;
  std::string names;
  unsigned named = 0;
  for (unsigned o = start, n = g.getNumOps(); o != n && named != maxNames; ++o)
    if (component[o] == c)
      names += std::string(named++ ? ", " : "") + "'" + g.getOp(o).name + "'";
  if (componentSize > maxNames)
    names += ", and " + std::to_string(componentSize - maxNames) + " more";
  diags.note(first.loc, Twine(componentSize) +
                            " ops depend on each other through cycles: " +
                            names);
}

bool graph::verifyStructure(const Graph &g, DiagnosticEngine &diags) {
  unsigned before = diags.getNumErrors();
  StructureVerifier(g, diags).run();
  verifyUpdates(g, diags);
  return diags.getNumErrors() == before;
}
