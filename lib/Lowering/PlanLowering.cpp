//===- PlanLowering.cpp - From a plan to an ExecutablePlan ----------------===//
//
// This file implements lowerPlan: it checks the plan against the graph with
// the cost model's resolvePlanSteps and builds the ExecutablePlan the cost
// model predicts the peaks of (planner::buildExecutablePlan), with the
// plan's numbers for reports.
//
//===----------------------------------------------------------------------===//

#include "tofu/Lowering/PlanLowering.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Executable.h"

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
