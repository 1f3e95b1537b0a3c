//===- VerifyStructure.cpp - Names and dataflow of a graph ----------------===//
//
// This file implements the structural half of the graph verifier: names,
// dimensions, op outputs, producers and graph inputs, and cycles.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/Verifier.h"
#include "tofu/Support/Diagnostics.h"

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
  void reportCycle(unsigned start, std::vector<uint8_t> &state);

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

void StructureVerifier::reportCycle(unsigned start,
                                    std::vector<uint8_t> &state) {
  // Walk producer edges from `start` among unfinished ops until an op
  // repeats; the repeated suffix is a cycle.
  std::vector<unsigned> path;
  std::vector<int> posInPath(g.getNumOps(), -1);
  unsigned cur = start;
  while (posInPath[cur] < 0) {
    posInPath[cur] = path.size();
    path.push_back(cur);
    int next = -1;
    for (const TensorRef &ref : g.getOp(cur).inputs) {
      int p = ref.index < 0 ? -1 : g.getProducer(ref.index);
      if (p >= 0 && state[p] != 2) {
        next = p;
        break;
      }
    }
    if (next < 0)
      return;
    cur = next;
  }
  // path[posInPath[cur]..] is the cycle, each op reading the next one's
  // output; print it in dataflow order.
  std::vector<unsigned> cycle(path.begin() + posInPath[cur], path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()),
              cycle.end());
  std::string text;
  for (unsigned o : cycle)
    text += "'" + g.getOp(o).name + "' -> ";
  text += "'" + g.getOp(cycle.front()).name + "'";
  for (unsigned o : cycle)
    state[o] = 2;
  const Op &first = g.getOp(cycle.front());
  diags.error(first.loc, "op '" + first.name + "' is on a cycle: " + text);
}

void StructureVerifier::checkCycles() {
  // Kahn's algorithm; what is left is on or downstream of a cycle.
  unsigned n = g.getNumOps();
  std::vector<unsigned> pending(n, 0);
  std::vector<std::vector<unsigned>> readers(n);
  for (unsigned o = 0; o != n; ++o)
    for (const TensorRef &ref : g.getOp(o).inputs) {
      int p = ref.index < 0 ? -1 : g.getProducer(ref.index);
      if (p >= 0) {
        ++pending[o];
        readers[p].push_back(o);
      }
    }
  std::vector<uint8_t> state(n, 0); // 2 = done
  std::vector<unsigned> ready;
  for (unsigned o = 0; o != n; ++o)
    if (!pending[o])
      ready.push_back(o);
  while (!ready.empty()) {
    unsigned o = ready.back();
    ready.pop_back();
    state[o] = 2;
    for (unsigned r : readers[o])
      if (--pending[r] == 0)
        ready.push_back(r);
  }
  for (unsigned o = 0; o != n && !diags.shouldStop(); ++o)
    if (state[o] != 2)
      reportCycle(o, state);
}

bool graph::verifyStructure(const Graph &g, DiagnosticEngine &diags) {
  unsigned before = diags.getNumErrors();
  StructureVerifier(g, diags).run();
  return diags.getNumErrors() == before;
}
