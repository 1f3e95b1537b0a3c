//===- StepTime.h - A plan's step time on a measured machine ----*- C++ -*-===//
//
// This file declares the calibrated step-time estimate (docs/StepTime.md):
// a plan's training step on a machine that tofu-calibrate measured
// (Machine.h): each worker's kernels, copies and messages in the
// executor's order, the workers sharing the machine's cores.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_STEPTIME_H
#define TOFU_PLANNER_STEPTIME_H

#include "tofu/Planner/Machine.h"
#include "tofu/Planner/PlanningProblem.h"

#include "llvm/Support/Error.h"

namespace tofu {
namespace planner {

/// Estimates one step of `p` on `machine`; `opKinds` names each op's kind
/// of kernel (codegen::getKernelKindName; empty: "elementwise"). Each
/// worker's step is written as the executor runs it (the runtime's
/// schedule, in-place and in-place update rules): local copies, messages
/// (the sender packs and hands over, the receiver waits, copies out and
/// unpacks), kernels timed with the machine's samples for the worker's
/// share (WorkModel.h), then simulated with the workers sharing the
/// machine's cores (StepSimulation.h). `computeSeconds` is the slowest
/// worker's time in kernels, `communicationSeconds` the rest of the step.
/// Fails when the plan's worker count is not the machine's or the plan
/// does not evaluate.
llvm::Expected<plan::StepEstimate>
estimateStepOnMachine(const PlanningProblem &problem, const plan::Plan &p,
                      const Machine &machine, ArrayRef<std::string> opKinds);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_STEPTIME_H
