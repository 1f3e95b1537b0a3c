//===- Search.h - The partition searches and baselines ----------*- C++ -*-===//
//
// This file declares the algorithms that turn a PlanningProblem into an
// Assignment for a given factoring of K into levels, one per file:
//  - searchRecursive (RecursiveSearch.cpp): Tofu's recursion, one level at
//    a time, outermost first, each level solved exactly by elimination on
//    the first group of workers of the levels above;
//  - searchExact (ExactSearch.cpp): every level at once, over every worker,
//    the true optimum of the cost model for that factoring;
//  - refineLevels (Refinement.cpp): block coordinate descent over the
//    levels of a recursive search's result, exact for each level;
//  - the baselines of docs/CostModel.md (Baselines.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_SEARCH_H
#define TOFU_PLANNER_SEARCH_H

#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/Coarsening.h"

#include "llvm/Support/Error.h"

#include <functional>

namespace tofu {
namespace planner {

/// Settings shared by the searches.
struct SearchSettings {
  /// Tensors may be replicated (memory-budgeted plans).
  bool replicateTensors = false;
  /// Price per stored byte of the most loaded measured worker.
  double bytePrice = 0;
  /// Largest elimination table (entries).
  uint64_t maxTableEntries = uint64_t(1) << 16;
  /// Beyond that, fix decisions greedily instead of failing (never for the
  /// exact search).
  bool allowConditioning = true;
  /// Repeated structure shares decisions (recursive search only; null:
  /// every op and tensor decides on its own).
  const Coarsening *coarsening = nullptr;
  /// Per tensor, a dimension it must be split along at every level it
  /// decides, or -1 where the search chooses (empty: nothing pinned).
  std::vector<int> pinnedTensorDims;
  /// Per level, a factor on its bytes (the slowness of the link it crosses,
  /// Topology.h); empty: every level weighs 1.
  SmallVector<double, 4> levelWeights;
  /// Called before each level is solved (level, number of levels).
  std::function<void(unsigned, unsigned)> onLevel;
  /// Refinement skips a window of levels whose outside is unchanged since
  /// its last solve (the same plan would come back); false solves it again
  /// (for tests: the plans must be the same).
  bool skipUnchangedWindows = true;
  /// Also leave out splits into parts more uneven than
  /// SearchSpace::kMaxPartOverShare where the shapes allow (the driver's
  /// second search of a factoring whose plan is unbalanced,
  /// docs/Planner.md, "Balanced memory").
  bool balanceShares = false;
};

/// What a search did, for reports.
struct SearchStats {
  unsigned decisions = 0;
  uint64_t largestTable = 0;
  /// Decisions fixed greedily (0: every level was solved exactly).
  unsigned conditioned = 0;
  /// Factorings whose plan was refined (refineLevels).
  unsigned refinements = 0;
  /// Refinement's windows of levels solved, and those skipped because the
  /// levels outside them were unchanged since their last solve.
  unsigned refineSolves = 0;
  unsigned refineSolvesSkipped = 0;
};

/// Tofu's recursive search over `levels`.
llvm::Expected<Assignment> searchRecursive(const PlanningProblem &problem,
                                           ArrayRef<unsigned> levels,
                                           const SearchSettings &settings,
                                           SearchStats &stats);

/// Re-decides each level of `assignment` with the others fixed, measured
/// over every worker, for up to `maxRounds` rounds or until a round gains
/// nothing; never makes the plan worse (Refinement.cpp).
llvm::Error refineLevels(const PlanningProblem &problem,
                         const SearchSettings &settings, unsigned maxRounds,
                         Assignment &assignment, SearchStats &stats);

/// The exact optimum over `levels`; an error when the graph is too large.
llvm::Expected<Assignment> searchExact(const PlanningProblem &problem,
                                       ArrayRef<unsigned> levels,
                                       const SearchSettings &settings,
                                       SearchStats &stats);

/// The data-parallel baseline for K workers (docs/CostModel.md).
/// `throughReshapes`: follow the batch through reshapes (findBatchVar), as
/// the fsdp and megatron-dp baselines do.
Assignment makeDataParallel(const PlanningProblem &problem, unsigned k,
                            bool throughReshapes = false);
/// The variable of `op` that carries the batch: the one that alone indexes
/// the batch dimension (`batchDims`, per tensor, -1 for none) of one of its
/// inputs; with `throughReshapes`, else output variable 0 when it occurs in
/// an input's batch index (a reshape merging or splitting the batch keeps
/// it outermost). -1 if none.
int findBatchVar(const ProblemOp &op, ArrayRef<int> batchDims,
                 bool throughReshapes);
/// The fsdp baseline (ZeRO-3) for K workers: the data-parallel baseline's
/// op steps, with every tensor that has no batch dimension stored sharded
/// over all K workers (FsdpBaseline.cpp).
Assignment makeFsdp(const PlanningProblem &problem, unsigned k);
/// The tensor layout of Megatron-LM's tensor parallelism (Baselines.cpp):
/// per tensor, the dimension its weights are split along, or -1.
std::vector<int> getMegatronTensorDims(const PlanningProblem &problem);

/// The replicate baseline: every tensor and op whole on every worker.
Assignment makeReplicated(const PlanningProblem &problem, unsigned k);

/// The prime factors of `k`, largest first.
SmallVector<unsigned, 4> getPrimeFactors(unsigned k);
/// The factorings of `k` the searches try: the distinct orders of its prime
/// factors, largest first (at most `maxOrders`), and, for k up to
/// `maxSingleLevel`, one k-way level. The exact search lifts both caps.
std::vector<SmallVector<unsigned, 4>>
getLevelCandidates(unsigned k, unsigned maxOrders = 6,
                   unsigned maxSingleLevel = 16);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_SEARCH_H
