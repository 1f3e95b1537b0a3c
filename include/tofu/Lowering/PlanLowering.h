//===- PlanLowering.h - From a plan to an ExecutablePlan --------*- C++ -*-===//
//
// This file declares the lowering of a plan (plan::Plan) of a bound graph
// (planner::PlanningProblem) to the runtime's ExecutablePlan: every
// tensor's stored box per worker and every op's iteration box, input boxes
// and output box per worker, computed by the same functions the cost model
// charges (planner::computeOpShare), so the runtime moves what the plan's
// comm_bytes counts; and its compact form for compiled plans (layouts and
// op rules, from which the runtime derives the same boxes).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LOWERING_PLANLOWERING_H
#define TOFU_LOWERING_PLANLOWERING_H

#include "tofu/Planner/PlanningProblem.h"
#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/GeneratedPlan.h"

#include "llvm/Support/Error.h"

namespace tofu {
namespace lowering {

/// The runtime's element type of `dtype`; an error for f16 and bf16, which
/// the runtime does not execute yet.
llvm::Expected<runtime::ElementType> getElementType(DType dtype);

/// Lowers `p` for `problem`'s graph. Fails with a message naming the op or
/// tensor where the plan does not match the graph, or a tensor of a type
/// the runtime does not execute. With `worker` one of the plan's workers
/// (an MPI rank's), the other workers' iteration boxes are left out
/// (planner::buildExecutablePlan).
llvm::Expected<runtime::ExecutablePlan>
lowerPlan(const planner::PlanningProblem &problem, const plan::Plan &p,
          int worker = -1);

/// Lowers `p` for `problem`'s graph as a compiled plan holds it
/// (runtime::CompactPlan): the ExecutablePlan without per-worker boxes,
/// every tensor's layout (the stored boxes listed only for a tensor whose
/// plan lists regions), and one op rule per op class (planner::getOpRule,
/// deduplicated). runtime::buildExecutablePlan derives from it exactly the
/// boxes lowerPlan computes. Fails as lowerPlan does.
llvm::Expected<runtime::CompactPlan>
lowerPlanCompact(const planner::PlanningProblem &problem, const plan::Plan &p);

/// The plan that computes everything on one worker (no levels, every tensor
/// stored whole): what `tofu-run --check` compares against.
plan::Plan makeSingleWorkerPlan(const planner::PlanningProblem &problem);

} // namespace lowering
} // namespace tofu

#endif // TOFU_LOWERING_PLANLOWERING_H
