//===- Assignment.cpp - Per-level decisions and the regions they make -----===//
//
// This file implements the nesting of levels for op boxes and tensor
// regions, and the translation between step indices and plan steps.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Assignment.h"

#include "tofu/Analysis/Layout.h"

using namespace tofu;
using namespace tofu::planner;
using analysis::Range;

void planner::getOpBox(const ProblemOp &op, ArrayRef<unsigned> levels,
                       ArrayRef<uint8_t> steps, ArrayRef<unsigned> digits,
                       SmallVectorImpl<Range> &box) {
  analysis::getFullBox(op.binding, box);
  for (unsigned l = 0, e = steps.size(); l != e; ++l) {
    if (steps[l] >= op.strategies.size())
      continue;
    unsigned var = op.strategies[steps[l]].var;
    box[var] = analysis::getEvenPart(box[var], levels[l], digits[l]);
  }
}

void planner::getTensorRegion(ArrayRef<int64_t> shape,
                              ArrayRef<unsigned> levels,
                              ArrayRef<uint8_t> dims,
                              ArrayRef<unsigned> digits,
                              analysis::Region &region) {
  analysis::getLayoutRegion(shape, levels, dims, digits, region);
}

bool planner::mixesReplicateAndReduce(const ProblemOp &op,
                                      ArrayRef<uint8_t> steps) {
  bool replicate = false, reduce = false;
  for (uint8_t s : steps) {
    replicate |= s == op.getReplicateStep();
    reduce |= op.isReduceStep(s);
  }
  return replicate && reduce;
}

llvm::Expected<SmallVector<uint8_t, 4>>
planner::resolveSteps(const ProblemOp &op, ArrayRef<plan::Step> steps) {
  SmallVector<uint8_t, 4> indices;
  for (const plan::Step &step : steps) {
    if (step.kind == plan::Step::Kind::Replicate) {
      indices.push_back(op.getReplicateStep());
      continue;
    }
    bool found = false;
    for (unsigned s = 0, e = op.strategies.size(); s != e && !found; ++s) {
      if (op.getStep(s) == step) {
        indices.push_back(s);
        found = true;
      }
    }
    if (!found) {
      std::string vars;
      for (unsigned s = 0, e = op.strategies.size(); s != e; ++s)
        vars += plan::formatStep(op.getStep(s)) + ", ";
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "step '" + plan::formatStep(step) +
              "' is not a strategy of the operator (it has: " + vars +
              "replicate)");
    }
  }
  if (mixesReplicateAndReduce(op, indices))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "steps mix 'replicate' and 'reduce' (replicas of partial values "
        "would be summed twice)");
  return indices;
}

plan::Plan planner::materializePlan(const PlanningProblem &problem,
                                    const Assignment &assignment) {
  plan::Plan result;
  result.levels = assignment.levels;
  result.workers = plan::getNumWorkers(assignment.levels);
  const graph::Graph &g = problem.getGraph();
  // Tensors as layouts alone: their regions are derived where read
  // (plan::getStoredRegion), so the plan grows with levels x tensors, not
  // workers x tensors (per-worker regions of GPT-3 at K = 4096 took 5.8 GB).
  result.ops.reserve(problem.getOps().size());
  result.tensors.reserve(problem.getTensors().size());
  for (unsigned i = 0, e = problem.getOps().size(); i != e; ++i) {
    const ProblemOp &op = problem.getOp(i);
    plan::OpPlan opPlan;
    opPlan.name = g.getOp(op.graphOp).name;
    for (uint8_t s : assignment.opSteps[i])
      opPlan.steps.push_back(op.getStep(s));
    result.ops.push_back(std::move(opPlan));
  }
  for (unsigned t = 0, e = problem.getTensors().size(); t != e; ++t) {
    plan::TensorPlan tensorPlan;
    tensorPlan.name = g.getTensor(t).name;
    ArrayRef<int64_t> shape = problem.getShape(t);
    tensorPlan.shape.assign(shape.begin(), shape.end());
    tensorPlan.layout.emplace();
    for (uint8_t d : assignment.tensorDims[t])
      tensorPlan.layout->push_back(d < shape.size() ? d : plan::kReplicateDim);
    result.tensors.push_back(std::move(tensorPlan));
  }
  return result;
}
