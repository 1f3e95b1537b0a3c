//===- PlanEmitters.h - Plans as Graphviz and C++ ---------------*- C++ -*-===//
//
// This file declares the plan emitters other than JSON: Graphviz (the
// coarsened graph, one node per forward/backward group, coloured by the
// step its ops take at the outermost level) and C++ (the plan as constant
// tables of layouts and op rules and the graph's op kernels, one source a
// training program compiles and links with the runtime library).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANEMIT_PLANEMITTERS_H
#define TOFU_PLANEMIT_PLANEMITTERS_H

#include "tofu/Graph/Graph.h"
#include "tofu/Plan/Plan.h"
#include "tofu/Runtime/GeneratedPlan.h"

#include "llvm/Support/raw_ostream.h"

namespace tofu {
namespace plan {

/// Writes the plan of graph `g` as a Graphviz digraph.
void writePlanDot(llvm::raw_ostream &os, const graph::Graph &g, const Plan &p);

/// What the C++ form of a plan is made of besides the graph.
struct CppPlanInput {
  /// The plan as layouts and op rules (lowering::lowerPlanCompact).
  const runtime::CompactPlan *plan = nullptr;
  /// The translation unit of the graph's kernels (codegen::emitGraphKernels),
  /// one kernel per op in graph order.
  std::string kernelsSource;
  /// The namespace of getGeneratedPlan(), e.g. "tofu_plan" or "app::k4".
  std::string cppNamespace = "tofu_plan";
  /// The graph file, for messages.
  std::string graphName;
};

/// True if `name` is a C++ namespace name: identifiers joined by "::".
bool isCppNamespaceName(StringRef name);

/// Writes one C++ source defining `NS::getGeneratedPlan()` (declared in
/// runtime/include/tofu/Runtime/GeneratedPlan.h) with everything else
/// internal (docs/PlanFormat.md, "C++"). Fails if the kernels' source does
/// not have the shape emitGraphKernels gives it.
llvm::Error writePlanCpp(llvm::raw_ostream &os, const graph::Graph &g,
                         const CppPlanInput &input);

} // namespace plan
} // namespace tofu

#endif // TOFU_PLANEMIT_PLANEMITTERS_H
