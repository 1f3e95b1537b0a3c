//===- PassInstrumentation.cpp - The planner's named passes ---------------===//
//
// This file implements the table of the planner's passes, the printing
// after a pass, and the printers of the coarsen, search and refine passes'
// results (the lower pass's result is a plan, printed as plan JSON).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/PassInstrumentation.h"

#include "tofu/Graph/Graph.h"
#include "tofu/Plan/Layouts.h"

#include "llvm/ADT/STLExtras.h"

using namespace tofu;
using namespace tofu::planner;

static const PlannerPassInfo passes[] = {
    {PlannerPass::Coarsen, "coarsen",
     "repeated structure's classes, which share one decision (once per "
     "graph)"},
    {PlannerPass::Search, "search",
     "each factoring's assignment: every op's step and every tensor's "
     "layout at each level"},
    {PlannerPass::Refine, "refine",
     "that assignment re-decided level by level (recursive search, "
     "several levels, refinement on)"},
    {PlannerPass::Lower, "lower",
     "the assignment as a plan with the cost model's numbers (plan JSON)"},
};

ArrayRef<PlannerPassInfo> planner::getPlannerPasses() { return passes; }

llvm::Optional<PlannerPass> planner::lookupPlannerPass(StringRef name) {
  for (const PlannerPassInfo &info : passes)
    if (name == info.name)
      return info.pass;
  return llvm::None;
}

StringRef planner::getPlannerPassName(PlannerPass pass) {
  return passes[unsigned(pass)].name;
}

void PassInstrumentation::enablePrintAfterAll() {
  for (const PlannerPassInfo &info : passes)
    enablePrintAfter(info.pass);
}

void PassInstrumentation::runAfterPass(
    PlannerPass pass, const llvm::Twine &unit,
    llvm::function_ref<void(llvm::raw_ostream &)> print) {
  if (!printsAfter(pass))
    return;
  os << "// -----// After " << getPlannerPassName(pass) << " (" << unit
     << ") //----- //\n";
  print(os);
  os.flush();
}

/// Members named per class; a graph's repeated layers can be thousands.
constexpr size_t MaxNamesShown = 8;

/// The members of each class of more than one, in order of first member
/// (the first MaxNamesShown by name).
static void printClasses(llvm::raw_ostream &os, StringRef what,
                         ArrayRef<unsigned> classOf, unsigned numClasses,
                         llvm::function_ref<StringRef(unsigned)> nameOf) {
  std::vector<std::vector<unsigned>> members(numClasses);
  for (unsigned i = 0, e = classOf.size(); i != e; ++i)
    members[classOf[i]].push_back(i);
  for (unsigned c = 0; c != numClasses; ++c) {
    if (members[c].size() < 2)
      continue;
    os << what << " class " << c << " (" << members[c].size() << "):";
    for (unsigned i : llvm::makeArrayRef(members[c]).take_front(MaxNamesShown))
      os << " '" << nameOf(i) << "'";
    if (members[c].size() > MaxNamesShown)
      os << " and " << members[c].size() - MaxNamesShown << " more";
    os << "\n";
  }
}

void planner::printCoarsening(llvm::raw_ostream &os,
                              const PlanningProblem &problem,
                              const Coarsening *coarse) {
  const graph::Graph &g = problem.getGraph();
  unsigned ops = problem.getOps().size(), tensors = problem.getTensors().size();
  if (!coarse) {
    os << ops << " ops and " << tensors
       << " tensors, each deciding alone\n";
    return;
  }
  os << ops << " ops in " << coarse->numOpClasses << " classes, " << tensors
     << " tensors in " << coarse->numTensorClasses << " classes\n";
  printClasses(os, "op", coarse->opClass, coarse->numOpClasses,
               [&](unsigned i) -> StringRef {
                 return g.getOp(problem.getOp(i).graphOp).name;
               });
  printClasses(os, "tensor", coarse->tensorClass, coarse->numTensorClasses,
               [&](unsigned t) -> StringRef { return g.getTensor(t).name; });
}

void planner::printAssignment(llvm::raw_ostream &os,
                              const PlanningProblem &problem,
                              const Assignment &assignment) {
  const graph::Graph &g = problem.getGraph();
  os << "levels " << plan::formatLevels(assignment.levels) << "\n";
  for (unsigned i = 0, e = assignment.opSteps.size(); i != e; ++i) {
    const ProblemOp &op = problem.getOp(i);
    os << "op '" << g.getOp(op.graphOp).name << "':";
    for (uint8_t s : assignment.opSteps[i])
      os << " " << plan::formatStep(op.getStep(s));
    os << "\n";
  }
  for (unsigned t = 0, e = assignment.tensorDims.size(); t != e; ++t) {
    os << "tensor '" << g.getTensor(t).name << "':";
    for (uint8_t d : assignment.tensorDims[t])
      os << " "
         << plan::formatLayoutStep(d < problem.getTensor(t).rank
                                       ? d
                                       : plan::kReplicateDim);
    os << "\n";
  }
}
