//===- Summary.h - tofu-plan's human-readable report ------------*- C++ -*-===//
//
// This file declares the summary tofu-plan prints with --emit=summary.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_PLAN_SUMMARY_H
#define TOFU_TOOLS_TOFU_PLAN_SUMMARY_H

#include "tofu/Planner/Planner.h"
#include "tofu/Planner/RecomputeChoice.h"

namespace tofu {

struct SummaryInput {
  std::string graphName;
  const planner::PlanningProblem *problem = nullptr;
  const plan::Plan *plan = nullptr;
  /// The search's report; null for a baseline plan.
  const planner::PlannerReport *report = nullptr;
  std::string what;
  const plan::Plan *dataParallel = nullptr;
  const plan::Plan *replicated = nullptr;
  /// Null for graphs without linear layers.
  const plan::Plan *megatron = nullptr;
  const plan::Plan *fsdp = nullptr;
  const plan::Plan *megatronDP = nullptr;
  /// What fills each worker of `plan` at its peak, when already predicted
  /// (the search's report, planBaseline); null: the summary predicts it.
  const std::vector<runtime::WorkerPeak> *peaks = nullptr;
  /// What --peak-memory did; null without it.
  const planner::RecomputeReport *recompute = nullptr;
};

/// Prints the report: totals, baselines as ratios, the search, per group
/// steps and bytes, and the top communication sites.
void printPlanSummary(llvm::raw_ostream &os, const SummaryInput &in);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_PLAN_SUMMARY_H
