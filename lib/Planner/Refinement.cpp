//===- Refinement.cpp - Re-deciding levels given the others ---------------===//
//
// This file implements the refinement of a recursive search's result
// (docs/Planner.md, "Refinement"). The recursion decides each level before
// the levels inside it exist, and measures only the first group of
// workers; refinement removes both approximations a window of levels at a
// time: it re-decides levels [l, l + width) with every other level fixed,
// over every worker, an elimination no larger than the recursion's for a
// window of one level. On graphs small enough that every op decides alone,
// windows of two adjacent levels are tried first (on two-level factorings
// that is the exact search) and given up for single levels as soon as one
// is too large. A result is kept only if its
// objective (every solve measures the whole plan's) is lower, so refinement
// never makes a plan worse (block coordinate descent); rounds stop when one
// gains nothing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Search.h"
#include "tofu/Planner/SearchSpace.h"

#include <map>

using namespace tofu;
using namespace tofu::planner;

namespace {

class Refiner {
public:
  Refiner(const PlanningProblem &problem, const SearchSettings &settings,
          Assignment &assignment, SearchStats &stats)
      : problem(problem), settings(settings), assignment(assignment),
        stats(stats), everyWorker(getAllWorkers(assignment.levels)) {}

  llvm::Error run(unsigned maxRounds);

private:
  /// Solves levels [first, first + width) given the others; `cost` is the
  /// objective of the result. width 0 decides nothing: the objective of
  /// the current assignment.
  llvm::Error solve(unsigned first, unsigned width, const SearchSettings &s,
                    Assignment &out, double &cost);

  const PlanningProblem &problem;
  const SearchSettings &settings;
  Assignment &assignment;
  SearchStats &stats;
  std::vector<SmallVector<unsigned, 4>> everyWorker;
};

} // namespace

llvm::Error Refiner::solve(unsigned first, unsigned width,
                           const SearchSettings &s, Assignment &out,
                           double &cost) {
  SearchFrame frame;
  frame.levels = assignment.levels;
  frame.firstFree = width ? first : assignment.levels.size();
  frame.numFree = width;
  frame.prior = &assignment;
  frame.workers = everyWorker;
  frame.balanceParts = true;
  frame.balanceShares = s.balanceShares;
  out = assignment;
  return solveFrame(problem, std::move(frame), s, out, stats, &cost);
}

llvm::Error Refiner::run(unsigned maxRounds) {
  unsigned numLevels = assignment.levels.size();
  double current = 0;
  Assignment candidate;
  if (llvm::Error err = solve(0, 0, settings, candidate, current))
    return err;
  // Windows of two levels must be solved exactly or not at all.
  SearchSettings pairSettings = settings;
  pairSettings.allowConditioning = false;
  pairSettings.maxTableEntries =
      std::max<uint64_t>(settings.maxTableEntries, uint64_t(1) << 22);
  // Large graphs (those whose repeated structure shares decisions) would
  // spend more on pair tables than the rare gain is worth.
  unsigned width = settings.coarsening ? 1 : 2;
  // A window's solve depends only on the levels outside it (the free
  // levels' current decisions are not read), so a window whose outside is
  // unchanged since its last solve would find the same plan, which was
  // kept or refused then and would be now: it is skipped. `changes[l]`
  // counts the kept solves that re-decided level l; `seen` holds, per
  // window, those counts outside it at its last solve.
  SmallVector<unsigned, 4> changes(numLevels, 0);
  std::map<std::pair<unsigned, unsigned>, SmallVector<unsigned, 4>> seen;
  auto outside = [&](unsigned first, unsigned w) {
    SmallVector<unsigned, 4> counts(changes.begin(), changes.end());
    for (unsigned k = first; k != first + w; ++k)
      counts[k] = 0;
    return counts;
  };
  for (unsigned round = 0; round != maxRounds; ++round) {
    double start = current;
    for (unsigned l = 0; l + width <= numLevels; ++l) {
      auto [it, first] = seen.try_emplace({l, width}, outside(l, width));
      if (!first && settings.skipUnchangedWindows &&
          it->second == outside(l, width)) {
        ++stats.refineSolvesSkipped;
        continue;
      }
      it->second = outside(l, width);
      ++stats.refineSolves;
      double cost = 0;
      llvm::Error err = solve(l, width, width == 2 ? pairSettings : settings,
                              candidate, cost);
      if (err && width == 2) {
        llvm::consumeError(std::move(err));
        width = 1;
        l = -1u; // Start the round over with single levels.
        continue;
      }
      if (err)
        return err;
      if (cost < current) {
        assignment = std::move(candidate);
        current = cost;
        for (unsigned k = l; k != l + width; ++k)
          ++changes[k];
      }
    }
    if (!(current < start * (1 - 1e-12)))
      break;
  }
  ++stats.refinements;
  return llvm::Error::success();
}

llvm::Error planner::refineLevels(const PlanningProblem &problem,
                                  const SearchSettings &settings,
                                  unsigned maxRounds, Assignment &assignment,
                                  SearchStats &stats) {
  // Refinement measures all levels at once, so it cannot weight them apart:
  // with links of different speeds the recursion's plan stands.
  bool uniform = llvm::all_of(settings.levelWeights,
                              [&](double w) { return w == settings.levelWeights[0]; });
  if (assignment.levels.size() < 2 || !uniform)
    return llvm::Error::success();
  return Refiner(problem, settings, assignment, stats).run(maxRounds);
}
