//===- DotEmitter.cpp - Plans as Graphviz ---------------------------------===//
//
// This file implements the Graphviz view of a plan: one node per
// forward/backward group of the graph (ops without a group are their own),
// labelled with its ops, outermost step and bytes, filled with a colour per
// outermost step, and one edge per group-to-group dataflow.
//
//===----------------------------------------------------------------------===//

#include "tofu/PlanEmit/PlanEmitters.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <set>

using namespace tofu;
using namespace tofu::plan;

namespace {

struct GroupNode {
  std::string name;
  unsigned numOps = 0;
  std::string step;
  int64_t bytes = 0;
};

const char *const palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                               "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                               "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

} // namespace

void plan::writePlanDot(llvm::raw_ostream &os, const graph::Graph &g,
                        const Plan &p) {
  std::vector<GroupNode> groups;
  llvm::StringMap<unsigned> groupIds;
  std::vector<unsigned> opGroup(g.getNumOps());
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    const graph::Op &op = g.getOp(i);
    StringRef name = op.hasGroup ? StringRef(op.group) : StringRef(op.name);
    auto [it, inserted] = groupIds.try_emplace(name, groups.size());
    if (inserted) {
      GroupNode node;
      node.name = name.str();
      node.step = p.ops[i].steps.empty() ? "whole"
                                         : formatStep(p.ops[i].steps[0]);
      groups.push_back(node);
    }
    opGroup[i] = it->second;
    ++groups[it->second].numOps;
    groups[it->second].bytes += p.ops[i].cost.total();
  }
  llvm::StringMap<unsigned> colours;
  os << "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=filled, "
        "fontname=\"Helvetica\", fontsize=10];\n";
  os << "  label=\"" << p.workers << " workers, " << p.commBytes
     << " bytes moved; colour: outermost step\";\n";
  for (unsigned n = 0, e = groups.size(); n != e; ++n) {
    const GroupNode &node = groups[n];
    unsigned colour =
        colours.try_emplace(node.step, colours.size()).first->second;
    os << "  g" << n << " [label=\"" << escape(node.name) << "\\n"
       << node.numOps << (node.numOps == 1 ? " op" : " ops") << ", "
       << escape(node.step) << "\\n"
       << node.bytes << " B\", fillcolor=\""
       << palette[colour % (sizeof(palette) / sizeof(palette[0]))] << "\"];\n";
  }
  std::set<std::pair<unsigned, unsigned>> edges;
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i)
    for (const graph::TensorRef &ref : g.getOp(i).inputs) {
      int producer = g.getProducer(ref.index);
      if (producer >= 0 && opGroup[producer] != opGroup[i])
        edges.insert({opGroup[producer], opGroup[i]});
    }
  for (auto [from, to] : edges)
    os << "  g" << from << " -> g" << to << ";\n";
  os << "}\n";
}
