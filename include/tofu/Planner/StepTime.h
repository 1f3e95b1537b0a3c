//===- StepTime.h - A plan's step time on a measured machine ----*- C++ -*-===//
//
// This file declares the calibrated step-time estimate (docs/StepTime.md):
// a plan's training step on a machine that tofu-calibrate measured
// (Machine.h), as the slowest worker's compute plus its communication.
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
/// of kernel (codegen::getKernelKindName; empty: "elementwise"):
///  - compute: for each worker, the sum over ops of the machine's time of
///    one call of the op's kind with the work points (WorkModel.h) of the
///    worker's share; the step takes the slowest worker's;
///  - communication: the plan's comm_bytes spread evenly over the workers,
///    each byte paying the transport's bandwidth and two memory copies
///    (packing at the sender, unpacking at the receiver), plus one
///    transport latency per op that moves bytes (and one for the next
///    step's moves);
///  - no overlap of the two.
/// Fails when the plan's worker count is not the machine's or the plan
/// does not evaluate.
llvm::Expected<plan::StepEstimate>
estimateStepOnMachine(const PlanningProblem &problem, const plan::Plan &p,
                      const Machine &machine, ArrayRef<std::string> opKinds);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_STEPTIME_H
