//===- RecomputeChoice.cpp - Recompute until the peak fits a budget -------===//
//
// This file implements fitPeakBudget (RecomputeChoice.h): the families of
// ranked candidates (single ops, chains, non-nesting chains), the prefix
// search on each, the segments between cuts; and fitPeakBudgetJointly,
// which tries the search's other plans when the first cannot fit.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/RecomputeChoice.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Recompute.h"
#include "tofu/Planner/WorkModel.h"
#include "tofu/Runtime/StepMemory.h"
#include "tofu/Support/ByteSize.h"

#include "llvm/ADT/Optional.h"

#include <algorithm>
#include <tuple>

using namespace tofu;
using namespace tofu::planner;

int64_t planner::getMaxPeakBytes(const plan::Plan &p) {
  int64_t most = 0;
  for (int64_t bytes : p.peakBytesPerWorker)
    most = std::max(most, bytes);
  return most;
}

namespace {

/// A candidate (with its chain when recomputing chains) and what
/// recomputing it costs.
struct Candidate {
  /// The candidate first, then its chain members.
  std::vector<unsigned> tensors;
  int64_t bytes;
  /// A producer of `tensors` moves bytes under the plan.
  bool moves;
  /// The producers' work points (WorkModel, whole ops) per byte of
  /// `tensors`.
  double pointsPerByte;
};

/// The candidates with their costs under the plan whose per-op costs are
/// `costs`.
std::vector<Candidate> getCandidates(const PlanningProblem &problem,
                                     const CostReport &costs, bool chains) {
  const graph::Graph &g = problem.getGraph();
  unsigned backward = getBackwardStart(g);
  std::vector<Candidate> out;
  SmallVector<analysis::Range, 8> box;
  analysis::WorkerRegions regions;
  for (unsigned t : getRecomputeCandidates(g)) {
    Candidate c{{t}, 0, false, 0};
    if (chains)
      for (unsigned u : getRecomputeChain(g, t, backward))
        if (u != t)
          c.tensors.push_back(u);
    double points = 0;
    for (unsigned u : c.tensors) {
      unsigned producer = g.getProducer(u);
      const ProblemOp &op = problem.getOp(producer);
      // No levels: the whole op's box.
      computeOpShare(op, {}, {}, {}, box, regions);
      points += WorkModel(op).getPoints(box);
      c.bytes += g.getTensor(u).getNumBytes();
      c.moves = c.moves || costs.ops[producer].total() > 0;
    }
    c.bytes = std::max<int64_t>(c.bytes, 1);
    c.pointsPerByte = points / double(c.bytes);
    out.push_back(std::move(c));
  }
  return out;
}

/// The candidates in the order of `less`: per candidate, its tensors.
template <typename Less>
std::vector<std::vector<unsigned>> rank(std::vector<Candidate> candidates,
                                        Less less) {
  std::stable_sort(candidates.begin(), candidates.end(), less);
  std::vector<std::vector<unsigned>> ranked;
  for (Candidate &c : candidates)
    ranked.push_back(std::move(c.tensors));
  return ranked;
}

/// `ranked` without the chains that would nest: a chain is dropped when
/// one of its tensors is an input an earlier kept chain's producers read
/// from outside that chain (it stays live for them), or when its own
/// producers read such a tensor of an earlier kept chain (its clone would
/// recompute that chain's copy early). So every clone of a prefix reads
/// its outside inputs as their originals, live anyway, and recomputing a
/// prefix never re-runs earlier stretches of the forward pass.
std::vector<std::vector<unsigned>>
dropNested(const graph::Graph &g, std::vector<std::vector<unsigned>> ranked) {
  std::vector<bool> chosen(g.getNumTensors()), read(g.getNumTensors());
  std::vector<std::vector<unsigned>> kept;
  std::vector<unsigned> roots;
  for (std::vector<unsigned> &chain : ranked) {
    roots.clear();
    for (unsigned t : chain)
      for (const graph::TensorRef &in : g.getOp(g.getProducer(t)).inputs)
        if (std::find(chain.begin(), chain.end(), in.index) == chain.end())
          roots.push_back(in.index);
    bool nested =
        llvm::any_of(chain, [&](unsigned t) { return read[t]; }) ||
        llvm::any_of(roots, [&](unsigned t) { return chosen[t]; });
    if (nested)
      continue;
    for (unsigned t : chain)
      chosen[t] = true;
    for (unsigned t : roots)
      read[t] = true;
    kept.push_back(std::move(chain));
  }
  return kept;
}

/// The tensors of the first `n` of `ranked`, in tensor order, each once.
std::vector<unsigned> getPrefixTensors(ArrayRef<std::vector<unsigned>> ranked,
                                       unsigned n) {
  std::vector<unsigned> out;
  for (unsigned i = 0; i != n; ++i)
    out.insert(out.end(), ranked[i].begin(), ranked[i].end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Searches the prefixes of one ranking.
class PrefixSearch {
public:
  PrefixSearch(const PlanningProblem &problem, graph::SpecLibrary &specs,
               const plan::Plan &p, int64_t budget, RecomputeReport &report)
      : problem(problem), specs(specs), p(p), budget(budget), report(report) {
  }

  /// A short prefix of `ranked` that fits, with its length in `chosen`:
  /// the prefixes of `grid` evenly spaced lengths (the last the whole
  /// list) are evaluated, shortest first, until one fits; then bisection
  /// between it and the grid length before it (which does not fit) finds
  /// the shortest there. None if no grid length fits. `leastPeak` is
  /// lowered to the least fullest-worker peak evaluated.
  llvm::Expected<llvm::Optional<plan::Plan>>
  run(ArrayRef<std::vector<unsigned>> ranked, unsigned grid, unsigned &chosen,
      int64_t &leastPeak);

  /// The plan recomputing the tensors of `chains`.
  llvm::Expected<plan::Plan> probeSet(ArrayRef<std::vector<unsigned>> chains) {
    return probe(chains, chains.size());
  }

  /// What the fullest worker of the plan recomputing every candidate holds
  /// at its peak (empty before the first run).
  const llvm::Optional<runtime::WorkerPeak> &getFullestWithAll() const {
    return fullestWithAll;
  }

private:
  /// The plan recomputing the first `n` of `ranked`, with its rewritten
  /// plan's numbers (and its fullest worker's peak in `fullest` if given).
  llvm::Expected<plan::Plan> probe(ArrayRef<std::vector<unsigned>> ranked,
                                   unsigned n,
                                   runtime::WorkerPeak *fullest = nullptr);

  const PlanningProblem &problem;
  graph::SpecLibrary &specs;
  const plan::Plan &p;
  int64_t budget;
  RecomputeReport &report;
  /// The plan recomputing every candidate: the same set whatever the
  /// ranking (a plan lists its tensors in graph order), so evaluated once.
  llvm::Optional<plan::Plan> all;
  llvm::Optional<runtime::WorkerPeak> fullestWithAll;
};

} // namespace

llvm::Expected<plan::Plan>
PrefixSearch::probe(ArrayRef<std::vector<unsigned>> ranked, unsigned n,
                    runtime::WorkerPeak *fullest) {
  const graph::Graph &g = problem.getGraph();
  ++report.probes;
  plan::Plan q = p;
  // In tensor order (the rewrite does not depend on it).
  std::vector<unsigned> chosen = getPrefixTensors(ranked, n);
  q.recompute.clear();
  for (unsigned t : chosen)
    q.recompute.push_back(g.getTensor(t).name);
  auto prepared = prepareRecomputedPlan(g, specs, q);
  if (!prepared)
    return prepared.takeError();
  auto costs = evaluatePlan(*prepared->problem, prepared->plan);
  if (!costs)
    return costs.takeError();
  q.commBytes = costs->commBytes;
  q.residentBytesPerWorker = costs->residentBytesPerWorker;
  q.peakBytesPerWorker = costs->peakBytesPerWorker;
  if (fullest && !costs->peaks.empty())
    *fullest = *std::max_element(
        costs->peaks.begin(), costs->peaks.end(),
        [](const runtime::WorkerPeak &a, const runtime::WorkerPeak &b) {
          return a.bytes < b.bytes;
        });
  int64_t bytes = 0;
  for (unsigned t : chosen)
    bytes += g.getTensor(t).getNumBytes();
  report.points.push_back(
      {unsigned(chosen.size()), bytes, getMaxPeakBytes(q), q.commBytes});
  return std::move(q);
}

llvm::Expected<llvm::Optional<plan::Plan>>
PrefixSearch::run(ArrayRef<std::vector<unsigned>> ranked, unsigned grid,
                  unsigned &chosen, int64_t &leastPeak) {
  unsigned n = ranked.size();
  // `hi` fits, `lo` does not (the empty prefix is the plan, which does not).
  unsigned lo = 0, hi = 0;
  llvm::Optional<plan::Plan> fitting;
  for (unsigned i = 1; i <= grid && !fitting; ++i) {
    unsigned m = unsigned((uint64_t(n) * i + grid - 1) / grid);
    if (m <= lo)
      continue;
    plan::Plan q;
    if (m == n) {
      if (!all) {
        runtime::WorkerPeak fullest;
        auto probed = probe(ranked, n, &fullest);
        if (!probed)
          return probed.takeError();
        all = std::move(*probed);
        fullestWithAll = fullest;
      }
      q = *all;
    } else {
      auto probed = probe(ranked, m);
      if (!probed)
        return probed.takeError();
      q = std::move(*probed);
    }
    leastPeak = std::min(leastPeak, getMaxPeakBytes(q));
    if (getMaxPeakBytes(q) <= budget) {
      hi = m;
      fitting = std::move(q);
    } else {
      lo = m;
    }
  }
  if (!fitting)
    return llvm::Optional<plan::Plan>();
  plan::Plan best = std::move(*fitting);
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    auto q = probe(ranked, mid);
    if (!q)
      return q.takeError();
    leastPeak = std::min(leastPeak, getMaxPeakBytes(*q));
    if (getMaxPeakBytes(*q) <= budget) {
      hi = mid;
      best = std::move(*q);
    } else {
      lo = mid;
    }
  }
  chosen = hi;
  return llvm::Optional<plan::Plan>(std::move(best));
}

llvm::Expected<plan::Plan>
planner::fitPeakBudget(const PlanningProblem &problem,
                       graph::SpecLibrary &specs, plan::Plan p, int64_t budget,
                       RecomputeReport &report, bool chains) {
  const graph::Graph &g = problem.getGraph();
  report = RecomputeReport();
  report.budget = budget;
  report.chains = chains;
  report.peakBefore = report.peakAfter = getMaxPeakBytes(p);
  report.commBefore = report.commAfter = p.commBytes;
  report.liveBound = getLiveBytesBound(g, p.workers);
  report.points.push_back({0, 0, report.peakBefore, report.commBefore});
  if (report.peakBefore <= budget)
    return std::move(p);
  auto costs = evaluatePlan(problem, p);
  if (!costs)
    return costs.takeError();
  // The families of rankings tried, each a search of its own (its whole
  // list differs): single ops always; with `chains`, also chains, and
  // chains that do not nest (dropNested).
  struct Family {
    const char *name;
    std::vector<std::vector<unsigned>> cheapest, largest;
    /// Grid lengths tried before bisecting (PrefixSearch::run).
    unsigned grid;
  };
  std::vector<Family> families;
  std::vector<Candidate> singles = getCandidates(problem, *costs, false);
  report.candidates = singles.size();
  // Cheapest per freed byte first: producers that move nothing, then by
  // work per byte, then the larger tensor.
  auto cheapestFirst = [](const Candidate &a, const Candidate &b) {
    return std::make_tuple(a.moves, a.pointsPerByte, -a.bytes) <
           std::make_tuple(b.moves, b.pointsPerByte, -b.bytes);
  };
  auto largestFirst = [](const Candidate &a, const Candidate &b) {
    return a.bytes > b.bytes;
  };
  // Single ops: the peak falls as the prefix grows but for the last
  // candidates (which recompute their inputs' copies early), so the whole
  // list alone is tried first, then bisection (grid 1).
  families.push_back({"single ops", rank(singles, cheapestFirst),
                      rank(singles, largestFirst), 1});
  if (chains) {
    // Chains: recomputing every chain re-runs whole stretches of the
    // forward pass at the backward pass's start (a chain's clone reads its
    // listed inputs' copies, recursively), so the whole list can peak far
    // above a middle prefix: eight lengths are tried first.
    std::vector<Candidate> withChains = getCandidates(problem, *costs, true);
    Family all{"chains", rank(withChains, cheapestFirst),
               rank(withChains, largestFirst), 8};
    Family flat{"chains that do not nest", dropNested(g, all.cheapest),
                dropNested(g, all.largest), 8};
    families.push_back(std::move(all));
    families.push_back(std::move(flat));
  }
  llvm::Optional<plan::Plan> best;
  // Keeps `q`, which recomputes the first `chosen` of `ranked`, if it moves
  // fewer bytes than the best so far (then recomputes fewer bytes).
  auto consider = [&](plan::Plan q, ArrayRef<std::vector<unsigned>> ranked,
                      unsigned chosen, const char *family) {
    std::vector<unsigned> tensors = getPrefixTensors(ranked, chosen);
    int64_t bytes = 0;
    for (unsigned t : tensors)
      bytes += g.getTensor(t).getNumBytes();
    if (best && std::make_pair(q.commBytes, bytes) >=
                    std::make_pair(best->commBytes, report.recomputedBytes))
      return;
    best = std::move(q);
    report.chosen = chosen;
    report.chosenTensors = tensors.size();
    report.recomputedBytes = bytes;
    report.family = family;
  };
  int64_t leastPeak = report.peakBefore;
  // The single ops' search, whose whole list the error describes.
  llvm::Optional<runtime::WorkerPeak> fullestWithAll;
  for (const Family &family : families) {
    PrefixSearch search(problem, specs, p, budget, report);
    for (const std::vector<std::vector<unsigned>> *ranked :
         {&family.cheapest, &family.largest}) {
      if (ranked->empty())
        continue;
      unsigned chosen = 0;
      auto found = search.run(*ranked, family.grid, chosen, leastPeak);
      if (!found)
        return found.takeError();
      if (*found)
        consider(std::move(**found), *ranked, chosen, family.name);
    }
    if (&family == &families.front())
      fullestWithAll = search.getFullestWithAll();
  }
  if (chains) {
    // Segments: every candidate with its chain but every m-th cut
    // (getRecomputeCuts), kept, for m = 1, 2, 4, ...: the backward pass
    // recomputes one stretch between kept cuts at a time.
    std::vector<unsigned> cuts = getRecomputeCuts(g);
    std::vector<Candidate> withChains = getCandidates(problem, *costs, true);
    PrefixSearch search(problem, specs, p, budget, report);
    for (unsigned m = 1; !cuts.empty() && m <= cuts.size(); m *= 2) {
      std::vector<bool> kept(g.getNumTensors());
      for (unsigned i = 0; i < cuts.size(); i += m)
        kept[cuts[i]] = true;
      std::vector<std::vector<unsigned>> listed;
      for (const Candidate &c : withChains)
        if (!kept[c.tensors.front()])
          listed.push_back(c.tensors);
      if (listed.empty())
        continue;
      auto q = search.probeSet(listed);
      if (!q)
        return q.takeError();
      int64_t peak = getMaxPeakBytes(*q);
      leastPeak = std::min(leastPeak, peak);
      if (peak <= budget)
        consider(std::move(*q), listed, listed.size(), "segments");
    }
  }
  if (!best) {
    // Why: what the fullest worker holds at its peak when every candidate
    // is recomputed (parameters, state and their next values outlive the
    // step, so recomputation never frees them).
    std::string held;
    if (const auto &fullest = fullestWithAll) {
      held = "; recomputing all of them as single ops, the fullest worker "
             "peaks at " +
             formatByteSize(fullest->bytes, 2) + ", holding";
      const char *sep = " ";
      for (unsigned u = 0; u != runtime::NumMemoryUses; ++u) {
        if (!fullest->uses[u])
          continue;
        held += sep;
        held += runtime::getMemoryUseName(runtime::MemoryUse(u));
        held += " " + formatByteSize(fullest->uses[u], 2);
        sep = ", ";
      }
    }
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no plan found within --peak-memory " + formatByteSize(budget, 2) +
            " per worker: the plan's fullest worker peaks at " +
            formatByteSize(report.peakBefore, 2) +
            " recomputing nothing and at least " +
            formatByteSize(leastPeak, 2) + " recomputing any of the " +
            Twine(singles.size()) + " candidate activations tried" +
            (chains ? " (single ops and chains)" : " (single ops)") + held);
  }
  report.peakAfter = getMaxPeakBytes(*best);
  report.commAfter = best->commBytes;
  return std::move(*best);
}

llvm::Expected<plan::Plan> planner::fitPeakBudgetJointly(
    const PlanningProblem &problem, graph::SpecLibrary &specs,
    const PlannerOptions &options, const PlannerReport &searchReport,
    plan::Plan p, int64_t budget, RecomputeReport &report, bool chains,
    std::vector<std::string> &tried) {
  tried.clear();
  SmallVector<unsigned, 4> firstLevels = p.levels;
  int64_t firstComm = p.commBytes;
  int64_t firstResident = getMaxResidentBytes(p);
  auto first = fitPeakBudget(problem, specs, std::move(p), budget, report,
                             chains);
  if (first)
    return first;
  std::string firstError = llvm::toString(first.takeError());
  // The other candidates: the search's other factorings, least comm_bytes
  // first, then memory-weighted searches.
  struct Alternative {
    std::string what;
    PlannerOptions options;
  };
  std::vector<Alternative> alternatives;
  std::vector<LevelTrial> trials = searchReport.trials;
  std::stable_sort(trials.begin(), trials.end(),
                   [](const LevelTrial &a, const LevelTrial &b) {
                     return a.commBytes < b.commBytes;
                   });
  for (const LevelTrial &trial : trials) {
    if (trial.levels == firstLevels)
      continue;
    Alternative a{"levels " + plan::formatLevels(trial.levels), options};
    a.options.levels = trial.levels;
    alternatives.push_back(std::move(a));
  }
  // Resident bytes count every tensor a worker ever stores (not only
  // those live at once), so the caps are fractions of the search's plan's.
  for (int64_t cap : {firstResident * 3 / 4, firstResident / 2}) {
    if (options.memoryBytes && *options.memoryBytes <= cap)
      continue;
    Alternative a{"--memory " + formatByteSize(cap, 2), options};
    a.options.memoryBytes = cap;
    alternatives.push_back(std::move(a));
  }
  tried.push_back("the search's plan (levels " +
                  plan::formatLevels(firstLevels) + ", comm_bytes " +
                  std::to_string(firstComm) + "): no plan recomputing fits");
  llvm::Optional<plan::Plan> best;
  RecomputeReport bestReport;
  std::string bestWhat;
  for (Alternative &a : alternatives) {
    a.options.progress = nullptr;
    a.options.instrumentation = nullptr;
    PlannerReport r;
    auto q = planGraph(problem, a.options, r);
    if (!q) {
      tried.push_back(a.what + ": no plan (" + llvm::toString(q.takeError()) +
                      ")");
      continue;
    }
    std::string line = a.what + " (levels " + plan::formatLevels(q->levels) +
                       ", comm_bytes " + std::to_string(q->commBytes) +
                       ", peak " + formatByteSize(getMaxPeakBytes(*q), 2) +
                       ")";
    RecomputeReport rr;
    auto fitted = fitPeakBudget(problem, specs, std::move(*q), budget, rr,
                                chains);
    if (!fitted) {
      llvm::consumeError(fitted.takeError());
      tried.push_back(line + ": no plan recomputing fits");
      continue;
    }
    tried.push_back(line + ": fits recomputing " + std::to_string(rr.chosen) +
                    " candidates, peak " + formatByteSize(rr.peakAfter, 2) +
                    ", comm_bytes " + std::to_string(fitted->commBytes));
    if (!best || fitted->commBytes < best->commBytes) {
      best = std::move(*fitted);
      bestReport = rr;
      bestWhat = a.what;
    }
  }
  std::string lines;
  for (const std::string &line : tried)
    lines += (lines.empty() ? "" : "; ") + line;
  if (!best)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   firstError + "; also tried: " + lines);
  report = bestReport;
  if (!best->search)
    best->search.emplace();
  best->search->approximations.push_back(
      {"peak-memory", "--peak-memory " + formatByteSize(budget, 2) +
                          ": tried " + lines + "; kept " + bestWhat});
  return std::move(*best);
}
