//===- RecomputeChoice.h - Recompute until the peak fits a budget -*- C++ -*-===//
//
// This file declares the planner's recomputation decision under
// `tofu-plan --peak-memory B` (docs/Planner.md, "Recomputation"): given the
// plan the search found, if its fullest worker's predicted peak exceeds B,
// choose forward activations to recompute (Recompute.h) until it fits.
//
// The choice is greedy over ranked lists: the candidates
// (getRecomputeCandidates), alone (single ops) or each with its chain
// (getRecomputeChain), are ordered by what recomputing them costs per byte
// they free (first those whose producers move no bytes under the plan,
// then by the producers' work points, WorkModel over the whole ops, per
// byte of the tensors, ties to the larger, then the earlier) or largest
// first. For each list a short prefix whose rewritten plan's predicted
// peak fits is searched (each probe evaluates the rewritten plan with the
// cost model, so a probe's peak is exactly what the runtime measures);
// with chains, non-nesting chains and segments between cuts
// (getRecomputeCuts) are tried too, and the fitting plan moving fewest
// bytes is kept.
//
// The partitioning is the search's. Only when no recomputation fits it
// does fitPeakBudgetJointly try the search's other candidate plans (other
// factorings of K, memory-weighted searches): partitioning, replication
// and recomputation are not optimised together.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_RECOMPUTECHOICE_H
#define TOFU_PLANNER_RECOMPUTECHOICE_H

#include "tofu/Planner/Planner.h"
#include "tofu/Planner/PlanningProblem.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tofu {
namespace graph {
class SpecLibrary;
} // namespace graph

namespace planner {

/// What the recomputation decision did, for the summary.
struct RecomputeReport {
  int64_t budget = 0;
  /// The fullest worker's peak and comm_bytes of the plan as searched
  /// (nothing recomputed) and as returned.
  int64_t peakBefore = 0, peakAfter = 0;
  int64_t commBefore = 0, commAfter = 0;
  /// getLiveBytesBound of the graph: no plan recomputing nothing has a
  /// smaller fullest-worker peak.
  int64_t liveBound = 0;
  /// Candidates (with their chains when `chains`), how many of them were
  /// chosen and how many tensors that lists (chain members included).
  unsigned candidates = 0, chosen = 0, chosenTensors = 0;
  /// Candidates recomputed with their chains (getRecomputeChain), not as
  /// single ops.
  bool chains = true;
  /// The family of rankings the chosen plan came from: "single ops",
  /// "chains" or "chains that do not nest" (docs/Planner.md).
  std::string family;
  /// Rewritten plans evaluated.
  unsigned probes = 0;
  /// Bytes of the recomputed tensors (whole tensors, all workers).
  int64_t recomputedBytes = 0;
  /// One plan evaluated: how many tensors (and bytes) it lists, its
  /// fullest worker's peak and its comm_bytes.
  struct Point {
    unsigned tensors;
    int64_t recomputedBytes, peak, commBytes;
  };
  /// Every plan evaluated, the plan recomputing nothing first.
  std::vector<Point> points;
};

/// `p` (a plan of `problem`'s graph with the cost model's numbers) made to
/// fit `budget` bytes of peak per worker: unchanged if it fits, else with
/// the shortest ranked prefix of candidates in `recompute` and the numbers
/// of its rewritten plan. An error when even recomputing every candidate
/// does not fit (giving the peaks with none and with all, and what the
/// fullest worker holds at its peak with all, by use).
/// With `chains`, each candidate is recomputed with its chain
/// (getRecomputeChain) and ranked by the chain's producers' work per byte
/// of the chain's tensors; without, as a single op.
llvm::Expected<plan::Plan> fitPeakBudget(const PlanningProblem &problem,
                                         graph::SpecLibrary &specs,
                                         plan::Plan p, int64_t budget,
                                         RecomputeReport &report,
                                         bool chains = true);

/// fitPeakBudget on the search's plan `p` (found with `options`, the
/// search's `searchReport`) and, when no recomputation fits it, on the
/// search's other candidates: the plan of each other factoring of K the
/// search tried (by its comm_bytes, least first) and the plans the search
/// finds under a cap on resident bytes (--memory) of 3/4 and 1/2 of `p`'s
/// fullest worker's (a memory-weighted cost). Of those that fit, the one moving the
/// fewest bytes is returned, with its report in `report`; each candidate
/// tried is one line in `tried`, and, when another plan than `p` is
/// returned, those lines are an approximation of kind `peak-memory` in its
/// `search` record. The error, when none fits, is `p`'s with those lines.
llvm::Expected<plan::Plan>
fitPeakBudgetJointly(const PlanningProblem &problem, graph::SpecLibrary &specs,
                     const PlannerOptions &options,
                     const PlannerReport &searchReport, plan::Plan p,
                     int64_t budget, RecomputeReport &report, bool chains,
                     std::vector<std::string> &tried);

/// The fullest worker's peak of `p`.
int64_t getMaxPeakBytes(const plan::Plan &p);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_RECOMPUTECHOICE_H
