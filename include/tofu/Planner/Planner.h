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
#include "tofu/Planner/Search.h"
#include "tofu/Planner/Topology.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tofu {
namespace planner {

enum class SearchKind { Recursive, Exact };
enum class BaselineKind { DataParallel, Replicate, Megatron };

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
  /// Stop trying further factorings after this many seconds (0: no limit).
  double timeLimitSeconds = 0;
  /// Where progress lines go for searches over a second (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
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
  /// The memory price of the chosen plan (0 without a budget).
  double bytePrice = 0;
  /// Ops and tensors, and their classes when repeated structure shared
  /// decisions (Coarsening.h).
  unsigned ops = 0, tensors = 0, opClasses = 0, tensorClasses = 0;
  bool coarsened = false;
  /// Why the search stopped early, if it did.
  std::string note;
};

/// Finds the plan. Errors: the budget cannot be met, or the exact search
/// cannot handle the graph.
llvm::Expected<plan::Plan> planGraph(const PlanningProblem &problem,
                                     const PlannerOptions &options,
                                     PlannerReport &report);

/// The named baseline, with its costs (and its estimate on `topology`).
/// Only the Megatron baseline searches, and may fail like a search.
llvm::Expected<plan::Plan> planBaseline(const PlanningProblem &problem, BaselineKind kind,
                        unsigned workers,
                        const llvm::Optional<Topology> &topology = llvm::None);

/// The largest resident bytes of any worker.
int64_t getMaxResidentBytes(const plan::Plan &p);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_PLANNER_H
