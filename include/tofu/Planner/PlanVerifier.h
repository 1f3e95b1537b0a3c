//===- PlanVerifier.h - Check a plan against its graph ----------*- C++ -*-===//
//
// This file declares the plan verifier behind `tofu-plan --verify`: from
// the plan and the graph alone (no search), it checks that the plan lines
// up with the graph (ops, steps, tensors, regions inside their tensors),
// that every tensor's regions cover it, and that the plan's comm_bytes,
// resident and peak bytes are what the cost model says. tofu-run checks
// every plan with it before running it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_PLANVERIFIER_H
#define TOFU_PLANNER_PLANVERIFIER_H

#include "tofu/Planner/CostModel.h"

#include "llvm/Support/raw_ostream.h"

namespace tofu {
namespace planner {

/// Verifies `p`; prints each problem as `TOOL: error: ...` to `errs` and
/// returns false if there is any. On success `report` holds the
/// recomputed costs. The peaks must lie within resident bytes plus the
/// largest op buffers (the contract, which a plan from any tool can meet);
/// with `exactPeaks` they must be the cost model's own estimate, which is
/// what tofu-run measures a plan against.
bool verifyPlan(const PlanningProblem &problem, const plan::Plan &p,
                llvm::raw_ostream &errs, CostReport &report,
                StringRef tool = "tofu-plan", bool exactPeaks = false);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_PLANVERIFIER_H
