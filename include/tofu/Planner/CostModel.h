//===- CostModel.h - What a plan moves and holds ----------------*- C++ -*-===//
//
// This file declares the cost model of docs/CostModel.md, in two layers:
// the three terms of comm_bytes over per-worker regions (fetch, produce,
// next step), which the searches call on candidate decisions, and
// evaluatePlan, which applies them to a whole plan and adds the resident
// bytes per worker and the peak bytes the runtime measures per worker
// (predictPeaks). The search, the verifier and
// the reports all use these functions, so a plan is judged one way.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_COSTMODEL_H
#define TOFU_PLANNER_COSTMODEL_H

#include "tofu/Analysis/Regions.h"
#include "tofu/Planner/PlanningProblem.h"
#include "tofu/Runtime/StepMemory.h"

#include "tofu/Runtime/Box.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"

namespace tofu {
namespace planner {

/// A worker's stored region of a tensor; null when it stores nothing.
using HeldRegion = const analysis::Region *;

/// Fetch: the elements of `read` not in `held`.
int64_t countFetched(ArrayRef<analysis::Range> read, HeldRegion held);

/// Produce: the element transfers that deliver an op's output from the
/// regions the workers computed (`computed[w]`, partial values if
/// `partial`) to the regions they store (`held[w]`), over a tensor of rank
/// `rank`.
int64_t countProduced(ArrayRef<analysis::Region> computed,
                      ArrayRef<HeldRegion> held, bool partial, unsigned rank);

/// Next step: the elements each worker must receive so that a parameter
/// stored as `param` is found there after its update stored as `updated`.
int64_t countNextStep(ArrayRef<HeldRegion> param, ArrayRef<HeldRegion> updated);

/// Worker `digits`'s share of `op` under `steps` (one per level of
/// `levels`): its iteration box and the regions it reads and computes. The
/// cost model charges these regions and the runtime executes them.
void computeOpShare(const ProblemOp &op, ArrayRef<unsigned> levels,
                    ArrayRef<uint8_t> steps, ArrayRef<unsigned> digits,
                    SmallVectorImpl<analysis::Range> &box,
                    analysis::WorkerRegions &regions);
/// computeOpShare for every worker of `levels`, in worker order:
/// `fn(w, box, regions, same)`, `same` when worker w's box is worker
/// w - 1's (a level `op` is replicated on: the regions are not computed
/// again). The boxes are derived by plan::forEachWorkerPart, as
/// plan::forEachStoredRegion derives a layout's regions: the same nested
/// even parts as computeOpShare's.
void forEachOpShare(
    const ProblemOp &op, ArrayRef<unsigned> levels, ArrayRef<uint8_t> steps,
    llvm::function_ref<void(unsigned, ArrayRef<analysis::Range>,
                            const analysis::WorkerRegions &, bool)>
        fn);
/// True if `steps` reduce a variable of `op`: its outputs are partial.
bool isPartialShare(const ProblemOp &op, ArrayRef<uint8_t> steps);

/// The one check that `p` is a plan of `g`, which tools run first (one
/// error for a plan made for another graph) and every other check of a plan
/// (resolvePlanSteps, plan::checkLayouts, verifyPlan) assumes: levels that
/// multiply to the workers, each at least 2; the graph's ops and tensors,
/// in graph order, by name; one step per level for every op and every
/// tensor's layout; one region per worker for a tensor that lists regions
/// (or has no layout). The error names the first difference.
llvm::Error checkPlanMatchesGraph(const graph::Graph &g, const plan::Plan &p);

/// Checks that `p` matches the problem's graph (checkPlanMatchesGraph),
/// that every op's steps are strategies of its operator and every region
/// lies in its tensor, and resolves every op's steps into `steps`; an error
/// says where it does not. The regions are checked by the runtime's own
/// rules (runtime::checkBoxInTensor, through applyRuntimeRule), so that a
/// plan is judged one way before and after lowering.
llvm::Error resolvePlanSteps(const PlanningProblem &problem,
                             const plan::Plan &p,
                             std::vector<SmallVector<uint8_t, 4>> &steps);

/// `region` as the runtime's Box (an empty range becomes [lo, lo)).
runtime::Box toRuntimeBox(ArrayRef<analysis::Range> region);
/// toRuntimeBox into `box`, reusing its memory.
void assignRuntimeBox(ArrayRef<analysis::Range> region, runtime::Box &box);

/// Runs `rule`, one of the runtime's plan rules (validatePlan's, in
/// runtime/include/tofu/Runtime/ExecutablePlan.h), turning the
/// runtime::RuntimeError it throws into an error with its message.
llvm::Error applyRuntimeRule(llvm::function_ref<void()> rule);

/// Everything the cost model says of one plan.
struct CostReport {
  int64_t commBytes = 0;
  /// Per op (graph order): fetch and produce bytes.
  std::vector<plan::OpCost> ops;
  /// Per tensor: next-step bytes charged to an updated tensor (0 for others).
  std::vector<int64_t> nextStepBytes;
  std::vector<int64_t> residentBytesPerWorker;
  /// Per worker, the peak its pool measures in the runtime's first step
  /// (-1 when the plan's stored regions do not cover every tensor), and
  /// what its buffers hold at that moment.
  std::vector<int64_t> peakBytesPerWorker;
  std::vector<runtime::WorkerPeak> peaks;
  /// Per worker, the largest fetch and partial-output buffers of any op:
  /// a peak estimate may not exceed resident bytes plus this.
  std::vector<int64_t> largestBuffersPerWorker;
};

/// Evaluates `p` against `problem`. The plan must name the graph's ops and
/// tensors in graph order with one step per level and one region (or none)
/// per worker; an error says where it does not.
/// With Peaks::Skip the report's peaks are left empty: predicting them
/// builds the plan as the runtime executes it, the costliest part, which
/// the search and the step estimates do not need (the search predicts
/// only its chosen plan's, recordPeaks).
enum class Peaks { Predict, Skip };
llvm::Expected<CostReport> evaluatePlan(const PlanningProblem &problem,
                                        const plan::Plan &p,
                                        Peaks peaks = Peaks::Predict);

/// Sets `report`'s peaks: the plan as the runtime executes it
/// (buildExecutablePlan, `steps` as resolvePlanSteps gives them), its
/// schedule, and runtime::predictPeaks replaying the runtime's allocations
/// over them. This is the one implementation of the runtime's memory rule;
/// evaluatePlan calls it.
void predictPeaks(const PlanningProblem &problem, const plan::Plan &p,
                  ArrayRef<SmallVector<uint8_t, 4>> steps, CostReport &report);

/// Copies the report's numbers into the plan.
void recordCosts(const CostReport &report, plan::Plan &p);

/// Sets `p.peakBytesPerWorker` (predictPeaks) for a plan whose other
/// numbers were recorded from an evaluation with Peaks::Skip; with `peaks`,
/// also what each worker's buffers hold at its peak (CostReport::peaks), so
/// that a caller showing them need not predict them again.
void recordPeaks(const PlanningProblem &problem, plan::Plan &p,
                 std::vector<runtime::WorkerPeak> *peaks = nullptr);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_COSTMODEL_H
