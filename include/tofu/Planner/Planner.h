//===- Planner.h - From a graph to the best plan ----------------*- C++ -*-===//
//
// This file declares the planner's driver: it runs a search (Search.h) for
// every candidate factoring of K, evaluates each result with the cost
// model, and keeps the cheapest; with a memory budget it prices stored
// bytes (a Lagrange multiplier) and searches for the cheapest plan within
// the budget. It also builds the baseline plans, and reports what it did.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_PLANNER_H
#define TOFU_PLANNER_PLANNER_H

#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/PassInstrumentation.h"
#include "tofu/Planner/Search.h"
#include "tofu/Planner/Topology.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tofu {
namespace planner {

enum class SearchKind { Recursive, Exact };
enum class BaselineKind { DataParallel, Replicate, Megatron, Fsdp, MegatronDP };

/// Refinement measures every worker, so its cost grows with K while its
/// gain shrinks: beyond this many workers it is off unless asked for.
constexpr unsigned MaxWorkersRefinedByDefault = 16;

struct PlannerOptions {
  unsigned workers = 1;
  SearchKind search = SearchKind::Recursive;
  /// Cap on resident bytes per worker.
  llvm::Optional<int64_t> memoryBytes;
  /// The machine's links (null: every pair of workers equally far).
  llvm::Optional<Topology> topology;
  /// Refine the recursive search's plans level by level (refineLevels).
  bool refine = true;
  /// SearchSettings::skipUnchangedWindows.
  bool skipUnchangedWindows = true;
  /// Evaluate each refined factoring's plan before refinement too
  /// (LevelTrial::unrefinedCommBytes, which the summary prints): one more
  /// evaluation per factoring; off, unrefinedCommBytes stays 0.
  bool measureUnrefined = true;
  /// Stop trying further factorings after this many seconds (0: no limit).
  /// The exact search fails instead of stopping early.
  double timeLimitSeconds = 0;
  /// The one factoring of K to search (empty: the searches' candidates,
  /// getLevelCandidates or getTopologyLevelCandidates).
  SmallVector<unsigned, 4> levels;
  /// Where progress lines go for searches over a second (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
  /// What runs after each pass (PassInstrumentation.h; null: nothing).
  PassInstrumentation *instrumentation = nullptr;
};

/// One factoring tried.
struct LevelTrial {
  SmallVector<unsigned, 4> levels;
  int64_t commBytes = 0;
  int64_t maxResidentBytes = 0;
  double seconds = 0;
  /// comm_bytes before refinement (0: not refined).
  int64_t unrefinedCommBytes = 0;
};

/// What the planner did, for the summary.
struct PlannerReport {
  std::vector<LevelTrial> trials;
  double searchSeconds = 0;
  SearchStats stats;
  /// The returned plan's peaks per worker and what fills them (predicted
  /// once, by recordPeaks).
  std::vector<runtime::WorkerPeak> peaks;
  /// The memory price of the chosen plan (0 without a budget).
  double bytePrice = 0;
  /// Ops and tensors, and their classes when repeated structure shared
  /// decisions (Coarsening.h).
  unsigned ops = 0, tensors = 0, opClasses = 0, tensorClasses = 0;
  bool coarsened = false;
  /// Why the search stopped early, if it did (part of `approximations`).
  std::string note;
  /// Every approximation the search made, as the plan's "search" object
  /// records them (docs/PlanFormat.md); empty for the exact search.
  std::vector<plan::SearchRecord::Approximation> approximations;
};

/// Finds the plan and records in its `search` what the search did (the same
/// as `report.approximations`). Errors: the budget cannot be met; the exact
/// search cannot solve every factoring exactly, runs out of --time-limit,
/// or is asked for with a memory budget or a topology (whose plans it
/// cannot call optimal).
llvm::Expected<plan::Plan> planGraph(const PlanningProblem &problem,
                                     const PlannerOptions &options,
                                     PlannerReport &report);

/// The named baseline, with its costs (and its estimate on `topology`).
/// Only the Megatron baselines search, and may fail like a search.
/// MegatronDP puts Megatron's tensor parallelism within the innermost group
/// of `topology` (without one, within groups of gcd(K, 8) workers) and data
/// parallelism across the groups (getMegatronGroup).
/// With `peaks`, also what fills each worker's peak (CostReport::peaks).
llvm::Expected<plan::Plan> planBaseline(const PlanningProblem &problem, BaselineKind kind,
                        unsigned workers,
                        const llvm::Optional<Topology> &topology = llvm::None,
                        std::vector<runtime::WorkerPeak> *peaks = nullptr);

/// The workers of one Megatron group of the megatron-dp baseline.
unsigned getMegatronGroup(unsigned workers,
                          const llvm::Optional<Topology> &topology);

/// The largest resident bytes of any worker.
int64_t getMaxResidentBytes(const plan::Plan &p);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_PLANNER_H
