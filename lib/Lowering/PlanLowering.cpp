//===- PlanLowering.cpp - From a plan to an ExecutablePlan ----------------===//
//
// This file implements lowerPlan: it checks the plan against the graph with
// the cost model's resolvePlanSteps and builds the ExecutablePlan the cost
// model predicts the peaks of (planner::buildExecutablePlan), with the
// plan's numbers for reports; and lowerPlanCompact, the same plan as
// layouts and op rules for a compiled plan.
//
//===----------------------------------------------------------------------===//

#include "tofu/Lowering/PlanLowering.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Executable.h"
#include "tofu/Planner/OpClasses.h"

#include <map>

using namespace tofu;
using namespace tofu::lowering;

llvm::Expected<runtime::ElementType> lowering::getElementType(DType dtype) {
  return planner::getRuntimeElementType(dtype);
}

llvm::Expected<runtime::ExecutablePlan>
lowering::lowerPlan(const planner::PlanningProblem &problem,
                    const plan::Plan &p, int worker) {
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = planner::resolvePlanSteps(problem, p, steps))
    return std::move(err);
  auto out = planner::buildExecutablePlan(problem, p, steps,
                                          planner::UnexecutedTypes::Fail,
                                          worker);
  if (!out)
    return out.takeError();
  out->commBytes = p.commBytes;
  out->peakBytesPerWorker = p.peakBytesPerWorker;
  return std::move(*out);
}

llvm::Expected<runtime::CompactPlan>
lowering::lowerPlanCompact(const planner::PlanningProblem &problem,
                           const plan::Plan &p) {
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = planner::resolvePlanSteps(problem, p, steps))
    return std::move(err);
  auto skeleton = planner::buildExecutableSkeleton(
      problem, p, steps, planner::UnexecutedTypes::Fail);
  if (!skeleton)
    return skeleton.takeError();
  runtime::CompactPlan out;
  out.plan = std::move(*skeleton);
  out.plan.commBytes = p.commBytes;
  out.plan.peakBytesPerWorker = p.peakBytesPerWorker;
  out.plan.peakBytesPerWorker.resize(p.workers, 0);
  out.levels.assign(p.levels.begin(), p.levels.end());
  const graph::Graph &g = problem.getGraph();
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    out.roles.push_back(g.getTensor(t).roleName);
    const plan::TensorPlan &tensor = p.tensors[t];
    if (tensor.regions.empty()) {
      out.layouts.emplace_back(std::vector<uint8_t>(tensor.layout->begin(),
                                                    tensor.layout->end()));
      continue;
    }
    // A plan read with listed regions keeps them (they may be any cover).
    out.layouts.emplace_back();
    for (const llvm::Optional<plan::Region> &region : tensor.regions)
      out.plan.tensors[t].stored.push_back(
          region ? std::optional<runtime::Box>(planner::toRuntimeBox(*region))
                 : std::nullopt);
  }
  // Ops of one class (planner::computeOpClasses) have one rule; equal
  // encodings are one rule whatever their class.
  planner::OpClasses classes = planner::computeOpClasses(problem, p, steps);
  std::vector<int> classRule(classes.numOpClasses, -1);
  std::map<std::vector<int64_t>, unsigned> ruleIndex;
  for (unsigned i = 0, e = problem.getOps().size(); i != e; ++i) {
    int &rule = classRule[classes.opClass[i]];
    if (rule < 0) {
      auto encoded = runtime::encodeOpRule(
          planner::getOpRule(problem.getOp(i), steps[i], p.levels.size()));
      auto [it, added] = ruleIndex.try_emplace(encoded, out.rules.size());
      if (added)
        out.rules.push_back(std::move(encoded));
      rule = int(it->second);
    }
    out.opRules.push_back(unsigned(rule));
  }
  return std::move(out);
}

plan::Plan lowering::makeSingleWorkerPlan(const planner::PlanningProblem &problem) {
  const graph::Graph &g = problem.getGraph();
  plan::Plan p;
  p.workers = 1;
  for (const graph::Op &op : g.getOps())
    p.ops.push_back(plan::OpPlan{op.name, {}, {}});
  for (const graph::Tensor &t : g.getTensors()) {
    analysis::Region whole;
    for (int64_t extent : t.shape)
      whole.push_back(analysis::Range{0, extent});
    p.tensors.push_back(plan::TensorPlan{t.name, {whole}});
  }
  return p;
}
