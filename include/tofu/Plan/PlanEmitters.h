//===- PlanEmitters.h - Plans as Graphviz and C++ ---------------*- C++ -*-===//
//
// This file declares the plan emitters other than JSON: Graphviz (the
// coarsened graph, one node per forward/backward group, coloured by the
// step its ops take at the outermost level) and C++ (the plan as constant
// tables a program compiles and links with the runtime library).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLAN_PLANEMITTERS_H
#define TOFU_PLAN_PLANEMITTERS_H

#include "tofu/Graph/Graph.h"
#include "tofu/Plan/Plan.h"

#include "llvm/Support/raw_ostream.h"

namespace tofu {
namespace plan {

/// Writes the plan of graph `g` as a Graphviz digraph.
void writePlanDot(llvm::raw_ostream &os, const graph::Graph &g, const Plan &p);

/// Writes the plan as a C++ source defining `tofu::generated::plan()`
/// (docs/PlanFormat.md, "C++").
void writePlanCpp(llvm::raw_ostream &os, const graph::Graph &g, const Plan &p);

} // namespace plan
} // namespace tofu

#endif // TOFU_PLAN_PLANEMITTERS_H
