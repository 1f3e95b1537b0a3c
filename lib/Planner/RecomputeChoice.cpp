//===- RecomputeChoice.cpp - Recompute until the peak fits a budget -------===//
//
// This file implements fitPeakBudget (RecomputeChoice.h): the two rankings
// of the candidates and the bisection on the prefix of each that is
// recomputed.
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

/// A candidate and what recomputing it costs.
struct Candidate {
  unsigned tensor;
  int64_t bytes;
  /// The producer moves bytes under the plan.
  bool moves;
  /// The producer's work points (WorkModel, whole op) per byte of tensor.
  double pointsPerByte;
};

/// The candidates with their costs under the plan whose per-op costs are
/// `costs`.
std::vector<Candidate> getCandidates(const PlanningProblem &problem,
                                     const CostReport &costs) {
  const graph::Graph &g = problem.getGraph();
  std::vector<Candidate> out;
  SmallVector<analysis::Range, 8> box;
  analysis::WorkerRegions regions;
  for (unsigned t : getRecomputeCandidates(g)) {
    unsigned producer = g.getProducer(t);
    const ProblemOp &op = problem.getOp(producer);
    // No levels: the whole op's box.
    computeOpShare(op, {}, {}, {}, box, regions);
    double points = WorkModel(op).getPoints(box);
    int64_t bytes = std::max<int64_t>(g.getTensor(t).getNumBytes(), 1);
    out.push_back({t, bytes, costs.ops[producer].total() > 0,
                   points / double(bytes)});
  }
  return out;
}

/// The candidates' tensors in the order of `less`.
template <typename Less>
std::vector<unsigned> rank(std::vector<Candidate> candidates, Less less) {
  std::stable_sort(candidates.begin(), candidates.end(), less);
  std::vector<unsigned> ranked;
  for (const Candidate &c : candidates)
    ranked.push_back(c.tensor);
  return ranked;
}

/// Bisects the prefixes of one ranking.
class PrefixSearch {
public:
  PrefixSearch(const PlanningProblem &problem, graph::SpecLibrary &specs,
               const plan::Plan &p, int64_t budget, RecomputeReport &report)
      : problem(problem), specs(specs), p(p), budget(budget), report(report) {
  }

  /// The shortest prefix of `ranked` that fits, found by bisection, with
  /// its length in `chosen`; None if the whole list does not fit (its
  /// fullest worker's peak in `peakWithAll`).
  llvm::Expected<llvm::Optional<plan::Plan>>
  run(ArrayRef<unsigned> ranked, unsigned &chosen, int64_t &peakWithAll);

  /// What the fullest worker of the plan recomputing every candidate holds
  /// at its peak (empty before the first run).
  const llvm::Optional<runtime::WorkerPeak> &getFullestWithAll() const {
    return fullestWithAll;
  }

private:
  /// The plan recomputing the first `n` of `ranked`, with its rewritten
  /// plan's numbers (and its fullest worker's peak in `fullest` if given).
  llvm::Expected<plan::Plan> probe(ArrayRef<unsigned> ranked, unsigned n,
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

llvm::Expected<plan::Plan> PrefixSearch::probe(ArrayRef<unsigned> ranked,
                                               unsigned n,
                                               runtime::WorkerPeak *fullest) {
  const graph::Graph &g = problem.getGraph();
  ++report.probes;
  plan::Plan q = p;
  // In tensor order (the rewrite does not depend on it).
  std::vector<unsigned> chosen(ranked.begin(), ranked.begin() + n);
  std::sort(chosen.begin(), chosen.end());
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
  report.points.push_back({n, bytes, getMaxPeakBytes(q), q.commBytes});
  return std::move(q);
}

llvm::Expected<llvm::Optional<plan::Plan>>
PrefixSearch::run(ArrayRef<unsigned> ranked, unsigned &chosen,
                  int64_t &peakWithAll) {
  if (!all) {
    runtime::WorkerPeak fullest;
    auto q = probe(ranked, ranked.size(), &fullest);
    if (!q)
      return q.takeError();
    all = std::move(*q);
    fullestWithAll = fullest;
  }
  peakWithAll = getMaxPeakBytes(*all);
  if (peakWithAll > budget)
    return llvm::Optional<plan::Plan>();
  // `hi` fits, `lo` does not (the empty prefix is the plan, which does not).
  unsigned lo = 0, hi = ranked.size();
  plan::Plan best = *all;
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    auto q = probe(ranked, mid);
    if (!q)
      return q.takeError();
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
                       RecomputeReport &report) {
  const graph::Graph &g = problem.getGraph();
  report = RecomputeReport();
  report.budget = budget;
  report.peakBefore = report.peakAfter = getMaxPeakBytes(p);
  report.commBefore = report.commAfter = p.commBytes;
  report.liveBound = getLiveBytesBound(g, p.workers);
  report.points.push_back({0, 0, report.peakBefore, report.commBefore});
  if (report.peakBefore <= budget)
    return std::move(p);
  auto costs = evaluatePlan(problem, p);
  if (!costs)
    return costs.takeError();
  std::vector<Candidate> candidates = getCandidates(problem, *costs);
  report.candidates = candidates.size();
  // Cheapest per freed byte first: producers that move nothing, then by
  // work per byte, then the larger tensor.
  std::vector<unsigned> cheapest =
      rank(candidates, [](const Candidate &a, const Candidate &b) {
        return std::make_tuple(a.moves, a.pointsPerByte, -a.bytes) <
               std::make_tuple(b.moves, b.pointsPerByte, -b.bytes);
      });
  // Largest first.
  std::vector<unsigned> largest =
      rank(candidates, [](const Candidate &a, const Candidate &b) {
        return a.bytes > b.bytes;
      });
  PrefixSearch search(problem, specs, p, budget, report);
  llvm::Optional<plan::Plan> best;
  int64_t leastPeak = report.peakBefore;
  for (const std::vector<unsigned> *ranked : {&cheapest, &largest}) {
    if (ranked->empty())
      continue;
    unsigned chosen = 0;
    int64_t peakWithAll = 0;
    auto found = search.run(*ranked, chosen, peakWithAll);
    if (!found)
      return found.takeError();
    leastPeak = std::min(leastPeak, peakWithAll);
    if (!*found)
      continue;
    int64_t bytes = 0;
    for (unsigned i = 0; i != chosen; ++i)
      bytes += g.getTensor((*ranked)[i]).getNumBytes();
    // Fewer bytes moved, then fewer bytes recomputed.
    if (!best || std::make_pair((*found)->commBytes, bytes) <
                     std::make_pair(best->commBytes, report.recomputedBytes)) {
      best = std::move(**found);
      report.chosen = chosen;
      report.recomputedBytes = bytes;
    }
  }
  if (!best) {
    // Why: what the fullest worker holds at its peak when every candidate
    // is recomputed (parameters, state and their next values outlive the
    // step, so recomputation never frees them).
    std::string held;
    if (const auto &fullest = search.getFullestWithAll()) {
      held = "; recomputing all of them, the fullest worker peaks at " +
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
            Twine(candidates.size()) + " candidate activations tried" + held);
  }
  report.peakAfter = getMaxPeakBytes(*best);
  report.commAfter = best->commBytes;
  return std::move(*best);
}
