//===- Planner.cpp - From a graph to the best plan ------------------------===//
//
// This file implements the planner's driver: factorings of K tried in
// turn, each result judged by the cost model, and the memory budget met by
// raising the price of stored bytes until the plan fits (then narrowing
// the price down to the cheapest plan that still fits).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Planner.h"
#include "tofu/Support/ByteSize.h"

#include "llvm/Support/Format.h"

#include <chrono>

using namespace tofu;
using namespace tofu::planner;

namespace {

using Clock = std::chrono::steady_clock;

/// Graphs with more ops than this share the decisions of repeated
/// structure (docs/Planner.md, "Coarsening").
constexpr unsigned MaxOpsDecidedAlone = 2000;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Runs the searches and keeps the best plan.
class Driver {
public:
  Driver(const PlanningProblem &problem, const PlannerOptions &options,
         PlannerReport &report)
      : problem(problem), options(options), report(report),
        start(Clock::now()) {}

  llvm::Expected<plan::Plan> run();

private:
  /// The best plan over every factoring at one byte price; None if a
  /// search failed (the error is kept in `failure`).
  llvm::Optional<plan::Plan> searchAtPrice(double price);
  llvm::Expected<plan::Plan> searchWithinBudget(int64_t budget);
  /// On a topology, estimates the step of `p` and records it in `p`.
  llvm::Error recordEstimate(plan::Plan &p) const;
  /// The better of two plans: fewer bytes, or on a topology a shorter
  /// estimated step.
  bool isCheaper(const plan::Plan &a, const plan::Plan &b) const {
    if (a.estimate && b.estimate)
      return a.estimate->totalSeconds() < b.estimate->totalSeconds();
    return a.commBytes < b.commBytes;
  }
  void progress(const Twine &msg) {
    if (options.progress && secondsSince(start) > 1.0)
      *options.progress << "tofu-plan: [" << llvm::format("%.1f", secondsSince(start))
                        << " s] " << msg << "\n";
  }
  bool outOfTime() const {
    return options.timeLimitSeconds > 0 &&
           secondsSince(start) > options.timeLimitSeconds;
  }

  const PlanningProblem &problem;
  const PlannerOptions &options;
  PlannerReport &report;
  Clock::time_point start;
  llvm::Optional<std::string> failure;
  /// Repeated structure's classes, when decisions are shared.
  llvm::Optional<Coarsening> coarse;
};

} // namespace

llvm::Optional<plan::Plan> Driver::searchAtPrice(double price) {
  SearchSettings settings;
  settings.replicateTensors = options.memoryBytes.hasValue();
  settings.bytePrice = price;
  settings.coarsening = coarse ? &*coarse : nullptr;
  llvm::Optional<plan::Plan> best;
  // A budgeted search runs this at several prices: report the last run.
  report.trials.clear();
  report.note.clear();
  auto candidates = options.topology
                        ? getTopologyLevelCandidates(*options.topology)
                        : getLevelCandidates(options.workers);
  for (const auto &levels : candidates) {
    if (best && outOfTime()) {
      report.note = "stopped after " + std::to_string(report.trials.size()) +
                    " factorings: --time-limit reached";
      break;
    }
    Clock::time_point trialStart = Clock::now();
    std::string name = plan::formatLevels(levels);
    if (options.topology)
      settings.levelWeights = getLevelWeights(*options.topology, levels);
    settings.onLevel = [&](unsigned l, unsigned n) {
      progress("levels " + name + ": solving level " + Twine(l + 1) + "/" +
               Twine(n));
    };
    auto assignment =
        options.search == SearchKind::Exact
            ? searchExact(problem, levels, settings, report.stats)
            : searchRecursive(problem, levels, settings, report.stats);
    if (!assignment && options.search == SearchKind::Exact) {
      // The optimum over the other factorings still stands; say which
      // ones were out of reach.
      failure = llvm::toString(assignment.takeError());
      report.note += (report.note.empty() ? "" : "; ") +
                     ("levels " + name + " skipped: too large for the exact "
                                         "search");
      continue;
    }
    int64_t unrefinedBytes = 0;
    if (assignment && options.search == SearchKind::Recursive &&
        options.refine && levels.size() > 1) {
      progress("levels " + name + ": refining");
      if (auto costs = evaluatePlan(problem, materializePlan(problem, *assignment)))
        unrefinedBytes = costs->commBytes;
      else
        llvm::consumeError(costs.takeError());
      if (llvm::Error err = refineLevels(problem, settings, /*maxRounds=*/3,
                                         *assignment, report.stats))
        assignment = std::move(err);
    }
    if (!assignment) {
      failure = llvm::toString(assignment.takeError());
      return llvm::None;
    }
    plan::Plan candidate = materializePlan(problem, *assignment);
    auto costs = evaluatePlan(problem, candidate);
    if (!costs) {
      failure = llvm::toString(costs.takeError());
      return llvm::None;
    }
    recordCosts(*costs, candidate);
    if (llvm::Error err = recordEstimate(candidate)) {
      failure = llvm::toString(std::move(err));
      return llvm::None;
    }
    LevelTrial trial{levels, candidate.commBytes,
                     getMaxResidentBytes(candidate), secondsSince(trialStart),
                     unrefinedBytes};
    report.trials.push_back(trial);
    progress("levels " + name + ": " + Twine(candidate.commBytes) + " bytes");
    bool fits = !options.memoryBytes ||
                trial.maxResidentBytes <= *options.memoryBytes;
    bool bestFits = best && (!options.memoryBytes ||
                             getMaxResidentBytes(*best) <= *options.memoryBytes);
    if (!best || (fits && !bestFits) ||
        (fits == bestFits && isCheaper(candidate, *best)))
      best = std::move(candidate);
  }
  return best;
}

llvm::Error Driver::recordEstimate(plan::Plan &p) const {
  if (!options.topology)
    return llvm::Error::success();
  auto estimate = estimateStep(problem, p, *options.topology);
  if (!estimate)
    return estimate.takeError();
  p.topology = options.topology;
  p.estimate = std::move(*estimate);
  return llvm::Error::success();
}

static std::string formatBytes(int64_t bytes) {
  return formatByteSize(bytes, 2);
}

llvm::Expected<plan::Plan> Driver::searchWithinBudget(int64_t budget) {
  auto fits = [&](const plan::Plan &p) {
    return getMaxResidentBytes(p) <= budget;
  };
  auto fail = [&]() {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *failure);
  };
  // Free storage first: if the cheapest plan fits, it is the answer.
  llvm::Optional<plan::Plan> best = searchAtPrice(0);
  if (!best)
    return fail();
  if (fits(*best))
    return std::move(*best);
  // Raise the price until a plan fits. The report describes the run that
  // found the plan returned.
  double lo = 0, hi = 1.0 / 1024;
  llvm::Optional<plan::Plan> feasible;
  PlannerReport kept;
  auto keep = [&](plan::Plan p, double price) {
    feasible = std::move(p);
    report.bytePrice = price;
    kept = report;
  };
  int64_t leastResident = getMaxResidentBytes(*best);
  for (int i = 0; i != 40 && !feasible; ++i) {
    progress("memory price " + Twine(std::to_string(hi)) + " per byte");
    llvm::Optional<plan::Plan> p = searchAtPrice(hi);
    if (!p)
      return fail();
    leastResident = std::min(leastResident, getMaxResidentBytes(*p));
    if (fits(*p)) {
      keep(std::move(*p), hi);
    } else {
      lo = hi;
      hi *= 4;
    }
  }
  if (!feasible)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no plan found within --memory " + formatBytes(budget) +
            " per worker: the most frugal plan found needs " +
            formatBytes(leastResident));
  // Narrow the price: a lower one that still fits moves fewer bytes.
  for (int i = 0; i != 10 && !outOfTime(); ++i) {
    double mid = (lo + hi) / 2;
    llvm::Optional<plan::Plan> p = searchAtPrice(mid);
    if (!p)
      return fail();
    if (fits(*p)) {
      hi = mid;
      if (!isCheaper(*feasible, *p))
        keep(std::move(*p), mid);
    } else {
      lo = mid;
    }
  }
  // Keep the search statistics of every run; the trials and notes of the
  // plan's own.
  kept.stats = report.stats;
  report = std::move(kept);
  return std::move(*feasible);
}

llvm::Expected<plan::Plan> Driver::run() {
  report.ops = problem.getOps().size();
  report.tensors = problem.getTensors().size();
  // Large graphs share the decisions of repeated structure (the exact
  // search never does).
  if (options.search == SearchKind::Recursive &&
      problem.getOps().size() > MaxOpsDecidedAlone) {
    coarse = coarsenRepeatedStructure(problem);
    report.opClasses = coarse->numOpClasses;
    report.tensorClasses = coarse->numTensorClasses;
    report.coarsened = true;
  }
  if (options.memoryBytes) {
    // Every element is stored somewhere, so some worker holds at least
    // 1/K of the graph.
    int64_t least = (problem.getTotalBytes() + options.workers - 1) /
                    options.workers;
    if (*options.memoryBytes < least)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--memory " + formatBytes(*options.memoryBytes) +
              " per worker is below what any plan needs: the graph holds " +
              formatBytes(problem.getTotalBytes()) + ", at least " +
              formatBytes(least) + " per worker on " +
              Twine(options.workers) + " workers");
    auto result = searchWithinBudget(*options.memoryBytes);
    report.searchSeconds = secondsSince(start);
    return result;
  }
  llvm::Optional<plan::Plan> best = searchAtPrice(0);
  report.searchSeconds = secondsSince(start);
  if (!best)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *failure);
  return std::move(*best);
}

llvm::Expected<plan::Plan> planner::planGraph(const PlanningProblem &problem,
                                              const PlannerOptions &options,
                                              PlannerReport &report) {
  return Driver(problem, options, report).run();
}

/// Megatron-LM's tensor parallelism over one K-way level: the weights laid
/// out as it does, every other decision searched under that constraint.
static llvm::Expected<Assignment> makeMegatron(const PlanningProblem &problem,
                                               unsigned workers) {
  SearchSettings settings;
  settings.pinnedTensorDims = getMegatronTensorDims(problem);
  SearchStats stats;
  if (workers == 1)
    return makeReplicated(problem, workers);
  return searchRecursive(problem, {workers}, settings, stats);
}

llvm::Expected<plan::Plan>
planner::planBaseline(const PlanningProblem &problem, BaselineKind kind,
                      unsigned workers,
                      const llvm::Optional<Topology> &topology) {
  llvm::Expected<Assignment> a =
      kind == BaselineKind::DataParallel ? makeDataParallel(problem, workers)
      : kind == BaselineKind::Replicate  ? makeReplicated(problem, workers)
                                         : makeMegatron(problem, workers);
  if (!a)
    return a.takeError();
  plan::Plan p = materializePlan(problem, *a);
  // A baseline is built from the problem's own strategies: it always
  // evaluates.
  recordCosts(llvm::cantFail(evaluatePlan(problem, p)), p);
  if (topology) {
    auto estimate = estimateStep(problem, p, *topology);
    if (!estimate)
      return estimate.takeError();
    p.topology = topology;
    p.estimate = std::move(*estimate);
  }
  return std::move(p);
}

int64_t planner::getMaxResidentBytes(const plan::Plan &p) {
  int64_t most = 0;
  for (int64_t bytes : p.residentBytesPerWorker)
    most = std::max(most, bytes);
  return most;
}
