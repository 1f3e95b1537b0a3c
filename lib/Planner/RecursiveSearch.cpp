//===- RecursiveSearch.cpp - Tofu's level-by-level search -----------------===//
//
// This file implements the recursive search (docs/Planner.md): the first
// level is decided for the whole graph between f1 groups; each following
// level is decided inside the first group of the levels above, with the
// same decision applied to the other groups (they are the same sub-problem
// up to uneven splits), its costs counted once per group. Each level is an
// exact elimination over the graph's decisions.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Search.h"
#include "tofu/Planner/SearchSpace.h"

using namespace tofu;
using namespace tofu::planner;

llvm::Expected<Assignment>
planner::searchRecursive(const PlanningProblem &problem,
                         ArrayRef<unsigned> levels,
                         const SearchSettings &settings, SearchStats &stats) {
  Assignment assignment = makeUndecided(problem, levels);
  double groups = 1;
  for (unsigned l = 0, e = levels.size(); l != e; ++l) {
    if (settings.onLevel)
      settings.onLevel(l, e);
    SearchFrame frame;
    frame.levels.assign(levels.begin(), levels.begin() + l + 1);
    frame.firstFree = l;
    frame.prior = &assignment;
    frame.balanceParts = true;
    frame.balanceShares = settings.balanceShares;
    for (unsigned c = 0; c != levels[l]; ++c) {
      SmallVector<unsigned, 4> digits(l + 1, 0);
      digits[l] = c;
      frame.workers.push_back(std::move(digits));
    }
    frame.weight =
        groups * (settings.levelWeights.empty() ? 1 : settings.levelWeights[l]);
    if (llvm::Error err =
            solveFrame(problem, std::move(frame), settings, assignment, stats))
      return std::move(err);
    groups *= levels[l];
  }
  return assignment;
}
