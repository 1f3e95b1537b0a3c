//===- Planner.cpp - From a graph to the best plan ------------------------===//
//
// This file implements the planner's driver: factorings of K tried in
// turn, each result judged by the cost model, and the memory budget met by
// raising the price of stored bytes until the plan fits (then narrowing
// the price down to the cheapest plan that still fits).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Planner.h"
#include "tofu/Plan/PlanJSON.h"
#include "tofu/Support/ByteSize.h"

#include "llvm/Support/Format.h"

#include <chrono>
#include <climits>
#include <numeric>

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
  /// The factorings to try, with an approximation recorded for each cap
  /// that leaves some out.
  std::vector<SmallVector<unsigned, 4>> chooseCandidates();
  /// Records the approximations the search made besides the factorings
  /// left out, once it is done.
  void recordApproximations();
  /// Records what the search did in `p.search`.
  void recordSearch(plan::Plan &p);
  void approximate(StringRef kind, const Twine &message) {
    report.approximations.push_back({kind.str(), message.str()});
  }
  bool isExact() const { return options.search == SearchKind::Exact; }
  /// The best plan over every factoring at one byte price; None if a
  /// search failed (the error is kept in `failure`).
  llvm::Optional<plan::Plan> searchAtPrice(double price);
  llvm::Expected<plan::Plan> searchWithinBudget(int64_t budget);
  /// One factoring's search (and refinement, where on); sets
  /// lastUnrefinedBytes.
  llvm::Expected<Assignment> searchLevels(ArrayRef<unsigned> levels,
                                          const SearchSettings &settings,
                                          const std::string &name,
                                          const std::string &unit);
  /// Where `candidate` (evaluated) is unbalanced, searches its factoring
  /// again with even parts (SearchSettings::balanceShares) and takes that
  /// plan if it is balanced (docs/Planner.md, "Balanced memory").
  /// `assignment` is the search's result that `candidate` was made from.
  llvm::Error rebalance(ArrayRef<unsigned> levels,
                        const SearchSettings &settings,
                        const std::string &name, const std::string &unit,
                        const Assignment &assignment, plan::Plan &candidate);
  /// The most the fullest worker may store over an even share of the
  /// graph before rebalance searches again (issue 22's bound).
  static constexpr double kMaxResidentOverShare = 1.10;
  /// Whether `p`'s fullest worker stores at most kMaxResidentOverShare of
  /// an even share; always true where balance is not sought (the exact
  /// search, and memory budgets, which replicate tensors on purpose).
  bool isBalanced(const plan::Plan &p) const {
    if (options.search != SearchKind::Recursive || options.memoryBytes)
      return true;
    double share = double(problem.getTotalBytes()) / options.workers;
    return double(getMaxResidentBytes(p)) <= kMaxResidentOverShare * share;
  }
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
  /// After each pass (PassInstrumentation.h): prints its result if asked.
  void after(PlannerPass pass, const Twine &unit,
             llvm::function_ref<void(llvm::raw_ostream &)> print) {
    if (options.instrumentation)
      options.instrumentation->runAfterPass(pass, unit, print);
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
  std::vector<SmallVector<unsigned, 4>> candidates;
  /// The memory price was narrowed for fewer rounds than planned.
  bool narrowingCut = false;
  /// The bytes of the last searchLevels' plan before refinement (0: not
  /// measured).
  int64_t lastUnrefinedBytes = 0;
};

} // namespace

llvm::Expected<Assignment>
Driver::searchLevels(ArrayRef<unsigned> levels, const SearchSettings &settings,
                     const std::string &name, const std::string &unit) {
  auto assignment =
      options.search == SearchKind::Exact
          ? searchExact(problem, levels, settings, report.stats)
          : searchRecursive(problem, levels, settings, report.stats);
  if (assignment)
    after(PlannerPass::Search, unit, [&](llvm::raw_ostream &os) {
      printAssignment(os, problem, *assignment);
    });
  lastUnrefinedBytes = 0;
  if (assignment && options.search == SearchKind::Recursive &&
      options.refine && levels.size() > 1) {
    progress("levels " + name + ": refining");
    if (options.measureUnrefined) {
      auto costs = evaluatePlan(
          problem, materializePlan(problem, *assignment), Peaks::Skip);
      if (costs)
        lastUnrefinedBytes = costs->commBytes;
      else
        llvm::consumeError(costs.takeError());
    }
    if (llvm::Error err = refineLevels(problem, settings, /*maxRounds=*/3,
                                       *assignment, report.stats))
      return std::move(err);
    after(PlannerPass::Refine, unit, [&](llvm::raw_ostream &os) {
      printAssignment(os, problem, *assignment);
    });
  }
  return assignment;
}

llvm::Error Driver::rebalance(ArrayRef<unsigned> levels,
                              const SearchSettings &settings,
                              const std::string &name, const std::string &unit,
                              const Assignment &assignment,
                              plan::Plan &candidate) {
  if (settings.balanceShares || isBalanced(candidate))
    return llvm::Error::success();
  progress("levels " + name + ": unbalanced, searching with even parts");
  SearchSettings even = settings;
  even.balanceShares = true;
  int64_t unrefined = lastUnrefinedBytes;
  auto evenAssignment = searchLevels(levels, even, name, unit);
  if (!evenAssignment)
    return evenAssignment.takeError();
  // One materialized plan at a time (at K = 4096 each takes GiBs): the
  // first is made again from its assignment if it stays.
  candidate = plan::Plan();
  candidate = materializePlan(problem, *evenAssignment);
  auto costs = evaluatePlan(problem, candidate, Peaks::Skip);
  if (!costs)
    return costs.takeError();
  recordCosts(*costs, candidate);
  // The plan of even parts replaces the first only where it is balanced.
  if (isBalanced(candidate))
    return llvm::Error::success();
  lastUnrefinedBytes = unrefined;
  candidate = plan::Plan();
  candidate = materializePlan(problem, assignment);
  costs = evaluatePlan(problem, candidate, Peaks::Skip);
  if (!costs)
    return costs.takeError();
  recordCosts(*costs, candidate);
  return llvm::Error::success();
}

llvm::Optional<plan::Plan> Driver::searchAtPrice(double price) {
  SearchSettings settings;
  settings.replicateTensors = options.memoryBytes.hasValue();
  settings.bytePrice = price;
  settings.coarsening = coarse ? &*coarse : nullptr;
  settings.skipUnchangedWindows = options.skipUnchangedWindows;
  llvm::Optional<plan::Plan> best;
  // A budgeted search runs this at several prices: report the last run.
  report.trials.clear();
  report.note.clear();
  for (const auto &levels : candidates) {
    if (best && outOfTime()) {
      std::string tried = std::to_string(report.trials.size()) + " of the " +
                          std::to_string(candidates.size()) + " factorings";
      if (isExact()) {
        failure = "--search=exact reached --time-limit after " + tried +
                  ": the optimum over the others is unknown; raise "
                  "--time-limit, or use the default search "
                  "(--search=recursive)";
        return llvm::None;
      }
      report.note = "stopped after " + tried + ": --time-limit reached";
      break;
    }
    Clock::time_point trialStart = Clock::now();
    std::string name = plan::formatLevels(levels);
    std::string unit = "levels " + name;
    if (price)
      unit += ", byte price " + std::to_string(price);
    if (options.topology)
      settings.levelWeights = getLevelWeights(*options.topology, levels);
    settings.onLevel = [&](unsigned l, unsigned n) {
      progress("levels " + name + ": solving level " + Twine(l + 1) + "/" +
               Twine(n));
    };
    auto assignment = searchLevels(levels, settings, name, unit);
    if (!assignment) {
      failure = llvm::toString(assignment.takeError());
      return llvm::None;
    }
    plan::Plan candidate = materializePlan(problem, *assignment);
    // Candidates compare by bytes; only the chosen plan's peaks are
    // predicted (run).
    auto costs = evaluatePlan(problem, candidate, Peaks::Skip);
    if (!costs) {
      failure = llvm::toString(costs.takeError());
      return llvm::None;
    }
    recordCosts(*costs, candidate);
    if (llvm::Error err =
            rebalance(levels, settings, name, unit, *assignment, candidate)) {
      failure = llvm::toString(std::move(err));
      return llvm::None;
    }
    if (llvm::Error err = recordEstimate(candidate)) {
      failure = llvm::toString(std::move(err));
      return llvm::None;
    }
    after(PlannerPass::Lower, unit, [&](llvm::raw_ostream &os) {
      plan::writePlanJSON(os, candidate, "");
    });
    LevelTrial trial{levels, candidate.commBytes,
                     getMaxResidentBytes(candidate), secondsSince(trialStart),
                     lastUnrefinedBytes};
    report.trials.push_back(trial);
    progress("levels " + name + ": " + Twine(candidate.commBytes) + " bytes");
    bool fits = !options.memoryBytes ||
                trial.maxResidentBytes <= *options.memoryBytes;
    bool bestFits = best && (!options.memoryBytes ||
                             getMaxResidentBytes(*best) <= *options.memoryBytes);
    // Then a balanced plan beats an unbalanced one (where rebalance
    // applies), then the cheaper wins.
    bool even = isBalanced(candidate), bestEven = best && isBalanced(*best);
    if (!best || (fits && !bestFits) ||
        (fits == bestFits && even && !bestEven) ||
        (fits == bestFits && even == bestEven && isCheaper(candidate, *best)))
      best = std::move(candidate);
  }
  return best;
}

llvm::Error Driver::recordEstimate(plan::Plan &p) const {
  if (!options.topology)
    return llvm::Error::success();
  auto estimate = estimateStep(problem, p, *options.topology,
                               /*costsRecorded=*/true);
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
  for (int i = 0; i != 10; ++i) {
    if (outOfTime()) {
      narrowingCut = true;
      break;
    }
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

std::vector<SmallVector<unsigned, 4>> Driver::chooseCandidates() {
  if (!options.levels.empty())
    return {options.levels};
  // The exact search tries every factoring its candidates could hold; the
  // others are capped.
  if (options.topology) {
    auto all = getTopologyLevelCandidates(*options.topology, UINT_MAX,
                                          UINT_MAX);
    if (isExact())
      return all;
    auto tried = getTopologyLevelCandidates(*options.topology);
    if (tried.size() < all.size())
      approximate("factorings",
                  "tried " + Twine(tried.size()) + " of the " +
                      Twine(all.size()) +
                      " factorings that nest in the topology (up to 3 "
                      "orders of each topology level's prime factors, one "
                      "level for a topology level only up to 16 workers)");
    return tried;
  }
  auto all = getLevelCandidates(options.workers, UINT_MAX, UINT_MAX);
  if (isExact())
    return all;
  auto tried = getLevelCandidates(options.workers);
  // Beyond the orders of K's prime factors, `all` holds one K-way level
  // when K is not prime.
  unsigned k = options.workers;
  bool composite = getPrimeFactors(k).size() > 1;
  bool singleLevelLeftOut = composite && k > 16;
  size_t allOrders = all.size() - (composite ? 1 : 0);
  size_t triedOrders =
      tried.size() - (composite && !singleLevelLeftOut ? 1 : 0);
  if (triedOrders < allOrders)
    approximate("factor-orders",
                "tried " + Twine(triedOrders) + " of the " + Twine(allOrders) +
                    " orders of the prime factors of " + Twine(k) +
                    " (largest factors first)");
  if (singleLevelLeftOut)
    approximate("single-level",
                "did not try one " + Twine(k) +
                    "-way level (tried only up to 16 workers)");
  return tried;
}

void Driver::recordApproximations() {
  if (options.search == SearchKind::Recursive) {
    bool severalLevels = llvm::any_of(
        candidates, [](const SmallVector<unsigned, 4> &levels) {
          return levels.size() > 1;
        });
    bool uniformLinks =
        !options.topology ||
        llvm::all_of(options.topology->bandwidths, [&](double bw) {
          return bw == options.topology->bandwidths[0];
        });
    if (severalLevels && !options.refine)
      approximate("refinement-off",
                  "refinement off (--refine=false, the default above " +
                      Twine(MaxWorkersRefinedByDefault) +
                      " workers): each level was "
                      "decided before the levels inside it, on the first "
                      "group of workers");
    else if (severalLevels && !uniformLinks)
      approximate("refinement-off",
                  "refinement skipped: the topology's links differ in "
                  "speed, and refinement cannot weigh levels apart");
  }
  if (report.coarsened)
    approximate("shared-decisions",
                "repeated structure shares decisions (graphs above " +
                    Twine(MaxOpsDecidedAlone) + " ops): " + Twine(report.ops) +
                    " ops and " + Twine(report.tensors) +
                    " tensors decided as " + Twine(report.opClasses) +
                    " op and " + Twine(report.tensorClasses) +
                    " tensor decisions");
  if (report.stats.conditioned)
    approximate("greedy-decisions",
                Twine(report.stats.conditioned) +
                    " decisions fixed greedily where exact elimination "
                    "needed a table above 65536 entries");
  if (!report.note.empty())
    approximate("time-limit", report.note);
  if (narrowingCut)
    approximate("time-limit", "the memory price was narrowed for fewer "
                              "rounds: --time-limit reached");
}

llvm::Expected<plan::Plan> Driver::run() {
  report.ops = problem.getOps().size();
  report.tensors = problem.getTensors().size();
  if (isExact() && (options.memoryBytes || options.topology))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        Twine("--search=exact minimises comm_bytes without a budget: with ") +
            (options.memoryBytes ? "--memory" : "--topology") +
            " it could not call its plan the optimum; use the default "
            "search (--search=recursive)");
  candidates = chooseCandidates();
  // Large graphs share the decisions of repeated structure (the exact
  // search never does).
  if (options.search == SearchKind::Recursive &&
      problem.getOps().size() > MaxOpsDecidedAlone) {
    coarse = coarsenRepeatedStructure(problem);
    report.opClasses = coarse->numOpClasses;
    report.tensorClasses = coarse->numTensorClasses;
    report.coarsened = true;
  }
  after(PlannerPass::Coarsen, "graph", [&](llvm::raw_ostream &os) {
    printCoarsening(os, problem, coarse ? &*coarse : nullptr);
  });
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
    if (result) {
      recordPeaks(problem, *result, &report.peaks);
      recordSearch(*result);
    }
    return result;
  }
  llvm::Optional<plan::Plan> best = searchAtPrice(0);
  report.searchSeconds = secondsSince(start);
  if (!best)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *failure);
  recordPeaks(problem, *best, &report.peaks);
  recordSearch(*best);
  return std::move(*best);
}

void Driver::recordSearch(plan::Plan &p) {
  recordApproximations();
  plan::SearchRecord search;
  search.kind = isExact() ? "exact" : "recursive";
  search.exact = isExact();
  for (const LevelTrial &trial : report.trials)
    search.factorings.push_back(trial.levels);
  search.approximations = report.approximations;
  p.search = std::move(search);
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

unsigned planner::getMegatronGroup(unsigned workers,
                                  const llvm::Optional<Topology> &topology) {
  if (topology && !topology->factors.empty())
    return topology->factors.back();
  return std::gcd(workers, 8u);
}

/// Megatron's tensor parallelism within groups of getMegatronGroup workers
/// (the innermost, fastest links), data parallelism across them: the
/// data-parallel baseline's levels over the groups, outermost, then one
/// level whose steps and layouts are the Megatron baseline's for one group.
/// An op that would mix replicate and reduce steps takes the data-parallel
/// step at the inner level too.
static llvm::Expected<Assignment>
makeMegatronDP(const PlanningProblem &problem, unsigned workers,
               const llvm::Optional<Topology> &topology) {
  unsigned group = getMegatronGroup(workers, topology);
  if (group <= 1 || workers % group)
    return makeDataParallel(problem, workers, /*throughReshapes=*/true);
  llvm::Expected<Assignment> inner = makeMegatron(problem, group);
  if (!inner)
    return inner.takeError();
  if (group == workers)
    return inner;
  Assignment outer =
      makeDataParallel(problem, workers / group, /*throughReshapes=*/true);
  Assignment fallback =
      makeDataParallel(problem, group, /*throughReshapes=*/true);
  Assignment a = outer;
  a.levels.append(inner->levels.begin(), inner->levels.end());
  for (unsigned i = 0, e = a.opSteps.size(); i != e; ++i) {
    SmallVector<uint8_t, 4> steps = outer.opSteps[i];
    steps.append(inner->opSteps[i].begin(), inner->opSteps[i].end());
    if (mixesReplicateAndReduce(problem.getOp(i), steps)) {
      // The data-parallel baseline takes one step at every level.
      steps = outer.opSteps[i];
      steps.append(inner->levels.size(), fallback.opSteps[i][0]);
    }
    a.opSteps[i] = steps;
  }
  for (unsigned t = 0, e = a.tensorDims.size(); t != e; ++t)
    a.tensorDims[t].append(inner->tensorDims[t].begin(),
                           inner->tensorDims[t].end());
  return std::move(a);
}

llvm::Expected<plan::Plan>
planner::planBaseline(const PlanningProblem &problem, BaselineKind kind,
                      unsigned workers,
                      const llvm::Optional<Topology> &topology,
                      std::vector<runtime::WorkerPeak> *peaks) {
  llvm::Expected<Assignment> a =
      kind == BaselineKind::DataParallel ? makeDataParallel(problem, workers)
      : kind == BaselineKind::Replicate  ? makeReplicated(problem, workers)
      : kind == BaselineKind::Fsdp       ? makeFsdp(problem, workers)
      : kind == BaselineKind::MegatronDP
          ? makeMegatronDP(problem, workers, topology)
          : makeMegatron(problem, workers);
  if (!a)
    return a.takeError();
  plan::Plan p = materializePlan(problem, *a);
  // A baseline is built from the problem's own strategies: it always
  // evaluates.
  CostReport costs = llvm::cantFail(evaluatePlan(problem, p));
  recordCosts(costs, p);
  if (peaks)
    *peaks = std::move(costs.peaks);
  if (topology) {
    auto estimate = estimateStep(problem, p, *topology, /*costsRecorded=*/true);
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
