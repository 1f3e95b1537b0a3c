//===- ExactSearch.cpp - The optimum of the cost model --------------------===//
//
// This file implements the exact search: one elimination whose decisions
// are whole tuples (a step per level for every op, a dimension per level
// for every tensor), measured on every worker. It is the oracle of the
// tests: the recursive search is compared with it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Search.h"
#include "tofu/Planner/SearchSpace.h"

using namespace tofu;
using namespace tofu::planner;

llvm::Expected<Assignment> planner::searchExact(const PlanningProblem &problem,
                                                ArrayRef<unsigned> levels,
                                                const SearchSettings &settings,
                                                SearchStats &stats) {
  Assignment assignment = makeUndecided(problem, levels);
  if (settings.onLevel)
    settings.onLevel(0, 1);
  SearchFrame frame;
  frame.levels.assign(levels.begin(), levels.end());
  frame.workers = getAllWorkers(levels);
  SearchSettings exact = settings;
  exact.coarsening = nullptr;
  exact.allowConditioning = false;
  // The oracle may take its time: tables up to 2^24 entries (128 MiB).
  exact.maxTableEntries = std::max<uint64_t>(exact.maxTableEntries,
                                             uint64_t(1) << 24);
  if (llvm::Error err =
          solveFrame(problem, std::move(frame), exact, assignment, stats))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--search=exact cannot solve levels " + plan::formatLevels(levels) +
            " exactly (" + llvm::toString(std::move(err)) +
            "), so it has no optimum over every factoring of " +
            Twine(plan::getNumWorkers(levels)) +
            " workers to give; use the default search "
            "(--search=recursive), or --levels to ask for the optimum over "
            "fewer factorings");
  return assignment;
}
