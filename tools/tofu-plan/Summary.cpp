//===- Summary.cpp - tofu-plan's human-readable report --------------------===//
//
// This file implements the summary: what was planned, how many bytes move
// and how that compares with the baselines, how much each worker holds
// against an even share of the graph, how the search went, and where the
// bytes go (per forward/backward group, and the most expensive ops with
// the reason: which input they fetch, or delivering their output).
//
//===----------------------------------------------------------------------===//

#include "Summary.h"

#include "tofu/Plan/Layouts.h"
#include "tofu/Planner/Executable.h"
#include "tofu/Support/ByteSize.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

using namespace tofu;
using namespace tofu::planner;

namespace {

std::string formatBytes(double bytes) { return formatByteSize(bytes, 2); }

std::string formatSteps(const plan::OpPlan &op) {
  std::string text;
  for (const plan::Step &step : op.steps)
    text += (text.empty() ? "" : " ") + plan::formatStep(step);
  return text.empty() ? "whole" : text;
}

std::string ratio(int64_t value, int64_t base) {
  if (base == 0)
    return value == 0 ? "1.000x" : "inf";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.3fx", double(value) / double(base));
  return os.str();
}

class SummaryPrinter {
public:
  SummaryPrinter(llvm::raw_ostream &os, const SummaryInput &in)
      : os(os), in(in), g(in.problem->getGraph()), p(*in.plan) {}
  void print();

private:
  void printTotals();
  void printPeakComposition();
  /// What the fullest worker stores: bytes per use, and the tensor it
  /// holds most above an even share of.
  void printResidentComposition();
  void printBaselines();
  void printTopology();
  void printSearch();
  void printGroups();
  void printTopSites();
  std::string explain(unsigned i) const;
  /// What --peak-memory recomputed.
  void printRecompute();
  void printRecomputeFrontier();

  llvm::raw_ostream &os;
  const SummaryInput &in;
  const graph::Graph &g;
  const plan::Plan &p;
};

} // namespace

void SummaryPrinter::printTotals() {
  int64_t total = in.problem->getTotalBytes();
  int64_t resident = getMaxResidentBytes(p);
  int64_t peak = 0, sum = 0;
  bool predicted = !p.peakBytesPerWorker.empty();
  for (int64_t b : p.peakBytesPerWorker) {
    peak = std::max(peak, b);
    sum += b;
    predicted &= b >= 0;
  }
  os << "plan:       " << in.what << " for " << p.workers << " workers, levels "
     << plan::formatLevels(p.levels) << "\n";
  os << "graph:      " << in.graphName << ": " << g.getNumOps() << " ops, "
     << g.getNumTensors() << " tensors, " << formatBytes(total) << "\n";
  os << "comm_bytes: " << p.commBytes << " (" << formatBytes(p.commBytes)
     << " per training step)\n";
  os << "resident:   " << formatBytes(resident) << " on the fullest worker, "
     << ratio(resident, (total + p.workers - 1) / p.workers)
     << " of an even share (graph / " << p.workers << " = "
     << formatBytes(double(total) / p.workers) << ")\n";
  printResidentComposition();
  os << "peak:       " << formatBytes(peak)
     << " on the fullest worker (what the runtime's pool measures)";
  if (predicted) {
    // The mean over the workers, to say how balanced the peaks are.
    int64_t mean = sum / int64_t(p.peakBytesPerWorker.size());
    os << ", " << ratio(peak, mean) << " the mean (" << formatBytes(mean)
       << ")";
  }
  os << "\n";
  printPeakComposition();
}

void SummaryPrinter::printResidentComposition() {
  const std::vector<int64_t> &resident = p.residentBytesPerWorker;
  if (resident.empty() || p.tensors.size() != g.getNumTensors())
    return;
  unsigned fullest =
      std::max_element(resident.begin(), resident.end()) - resident.begin();
  std::vector<runtime::TensorMemory> memory = getTensorMemory(*in.problem);
  SmallVector<unsigned, 8> digits;
  plan::getWorkerDigits(p.levels, fullest, digits);
  std::array<int64_t, runtime::NumMemoryUses> uses{};
  int64_t mostExcess = 0;
  unsigned most = 0;
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    if (!plan::hasStoredRegions(p.tensors[t], p.workers))
      continue;
    int64_t held =
        plan::getStoredVolume(p.tensors[t], p.levels, digits) *
        memory[t].elementSize;
    uses[unsigned(memory[t].use)] += held;
    int64_t excess = held - in.problem->getNumElements(t) *
                                memory[t].elementSize / p.workers;
    if (excess > mostExcess)
      mostExcess = excess, most = t;
  }
  os << "            worker " << fullest << " stores:";
  const char *sep = " ";
  for (unsigned u = 0; u != runtime::NumMemoryUses; ++u)
    if (uses[u]) {
      os << sep << runtime::getMemoryUseName(runtime::MemoryUse(u)) << " "
         << formatBytes(uses[u]);
      sep = ", ";
    }
  os << "\n";
  if (mostExcess > 0)
    os << "            most above an even share: " << g.getTensor(most).name
       << ", " << formatBytes(mostExcess) << " more than 1/" << p.workers
       << " of it\n";
}

void SummaryPrinter::printPeakComposition() {
  std::vector<runtime::WorkerPeak> predicted;
  bool given = in.peaks && in.peaks->size() == p.workers;
  if (!given) {
    auto costs = evaluatePlan(*in.problem, p);
    if (!costs) {
      llvm::consumeError(costs.takeError());
      return;
    }
    predicted = std::move(costs->peaks);
  }
  const std::vector<runtime::WorkerPeak> &peaks =
      given ? *in.peaks : predicted;
  if (peaks.empty())
    return;
  unsigned fullest = 0;
  for (unsigned w = 1, e = peaks.size(); w != e; ++w)
    if (peaks[w].bytes > peaks[fullest].bytes)
      fullest = w;
  const runtime::WorkerPeak &peak = peaks[fullest];
  os << "            worker " << fullest << " at its peak";
  if (peak.op >= 0 && unsigned(peak.op) < p.ops.size())
    os << " (in " << p.ops[peak.op].name << ")";
  os << ":";
  const char *sep = " ";
  for (unsigned u = 0; u != runtime::NumMemoryUses; ++u) {
    os << sep << runtime::getMemoryUseName(runtime::MemoryUse(u)) << " "
       << formatBytes(peak.uses[u]);
    sep = u == 3 ? ",\n              " : ", ";
  }
  os << "\n";
  // What the pool's reuse adds: a kept buffer of up to twice a request
  // serves it, and the pool counts the buffer's capacity.
  if (peak.slack > 0) {
    int64_t total = 0;
    for (const runtime::WorkerPeak &w : peaks)
      total += w.slack;
    os << "              of it " << formatBytes(peak.slack)
       << " is reused buffers' capacity beyond their requests (mean over "
          "workers "
       << formatBytes(total / int64_t(peaks.size())) << ")\n";
  }
}

void SummaryPrinter::printBaselines() {
  if (!in.dataParallel && !in.replicated)
    return;
  os << "\nbaselines (same cost model):\n";
  // The fullest worker's resident and peak bytes (the largest of each,
  // possibly on different workers).
  os << llvm::format("  %-16s %18s %10s %14s %14s\n", (const char *)"plan",
                     (const char *)"comm_bytes", (const char *)"vs this",
                     (const char *)"resident/wkr", (const char *)"peak/wkr");
  auto row = [&](StringRef name, const plan::Plan &b) {
    int64_t peak = 0;
    for (int64_t bytes : b.peakBytesPerWorker)
      peak = std::max(peak, bytes);
    os << llvm::format("  %-16s %18lld %10s %14s %14s\n", name.str().c_str(),
                       (long long)b.commBytes,
                       ratio(b.commBytes, p.commBytes).c_str(),
                       formatBytes(getMaxResidentBytes(b)).c_str(),
                       formatBytes(peak).c_str());
  };
  row("this plan", p);
  if (in.dataParallel)
    row("data-parallel", *in.dataParallel);
  if (in.replicated)
    row("replicate", *in.replicated);
  if (in.megatron)
    row("megatron", *in.megatron);
  if (in.fsdp)
    row("fsdp", *in.fsdp);
  if (in.megatronDP)
    row("megatron-dp", *in.megatronDP);
}

static std::string formatSeconds(double seconds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (seconds >= 1)
    os << llvm::format("%.3f s", seconds);
  else if (seconds >= 1e-3)
    os << llvm::format("%.3f ms", seconds * 1e3);
  else
    os << llvm::format("%.3f us", seconds * 1e6);
  return os.str();
}

void SummaryPrinter::printTopology() {
  if (!p.topology && p.estimate && !p.extraFields.empty()) {
    // A baseline simulated on a GPU cluster (docs/Machines.md).
    const plan::StepEstimate &e = *p.estimate;
    os << "\nestimate:   " << formatSeconds(e.totalSeconds())
       << " per step, simulated on the GPU cluster (the plan's \""
       << p.extraFields.front().first
       << "\"): " << formatSeconds(e.computeSeconds) << " compute, "
       << formatSeconds(e.communicationSeconds)
       << " communication and pipeline bubble (docs/Machines.md)\n";
    return;
  }
  if (!p.topology && p.estimate) { // --machine
    const plan::StepEstimate &e = *p.estimate;
    os << "\nestimate:   " << formatSeconds(e.totalSeconds())
       << " per step on the measured machine: "
       << formatSeconds(e.computeSeconds) << " compute (slowest worker), "
       << formatSeconds(e.communicationSeconds)
       << " communication (docs/StepTime.md)\n";
    return;
  }
  if (!p.topology || !p.estimate)
    return;
  const plan::Topology &topology = *p.topology;
  const plan::StepEstimate &e = *p.estimate;
  os << "\ntopology:   " << formatTopology(topology) << "\n";
  os << "estimate:   " << formatSeconds(e.totalSeconds()) << " per step: "
     << formatSeconds(e.communicationSeconds) << " communication, "
     << formatSeconds(e.computeSeconds) << " compute at "
     << formatNumber(topology.flops / 1e12) << " TFLOP/s (no overlap)\n";
  for (unsigned l = 0, n = p.levels.size(); l != n; ++l) {
    double bandwidth = topology.bandwidths[e.links[l]];
    os << "  level " << l + 1 << " (" << p.levels[l] << "-way) on links of "
       << formatNumber(bandwidth / 1e9) << " GB/s: " << e.levelBytes[l]
       << " bytes, "
       << formatSeconds(double(e.levelBytes[l]) / p.workers / bandwidth)
       << "\n";
  }
  auto row = [&](StringRef name, const plan::Plan *b) {
    if (b && b->estimate)
      os << "  " << name << " estimate: "
         << formatSeconds(b->estimate->totalSeconds()) << " per step ("
         << llvm::format("%.3fx", b->estimate->totalSeconds() /
                                      e.totalSeconds())
         << " this plan's)\n";
  };
  row("data-parallel", in.dataParallel);
  row("replicate", in.replicated);
  row("megatron", in.megatron);
  row("fsdp", in.fsdp);
  row("megatron-dp", in.megatronDP);
}

void SummaryPrinter::printSearch() {
  if (!in.report)
    return;
  const PlannerReport &r = *in.report;
  os << "\nsearch:     " << llvm::format("%.3f", r.searchSeconds) << " s, "
     << r.stats.decisions << " decisions eliminated, largest table "
     << r.stats.largestTable << " entries\n";
  for (const LevelTrial &trial : r.trials) {
    os << "  levels " << plan::formatLevels(trial.levels) << ": "
       << trial.commBytes << " bytes, fullest worker "
       << formatBytes(trial.maxResidentBytes)
       << llvm::format(" (%.3f s)", trial.seconds)
       << (trial.levels == p.levels ? "  <- chosen" : "") << "\n";
    if (trial.unrefinedCommBytes)
      os << "    refined from " << trial.unrefinedCommBytes
         << " bytes (the recursion alone)\n";
  }
  if (r.stats.refinements)
    os << "  refinement: " << r.stats.refineSolves << " windows of levels "
       << "solved, " << r.stats.refineSolvesSkipped
       << " skipped (the levels outside them unchanged since their last "
          "solve)\n";
  if (r.coarsened)
    os << "  coarsening: " << r.ops << " ops, " << r.tensors
       << " tensors -> " << r.opClasses << " op and " << r.tensorClasses
       << " tensor decisions (repeated structure shares one)\n";
  else
    os << "  coarsening: none needed (" << r.ops << " ops, " << r.tensors
       << " tensors, each its own decision)\n";
  // Decisions fixed greedily are an approximation, listed below.
  if (!r.stats.conditioned)
    os << "  every level solved exactly\n";
  if (r.bytePrice > 0)
    os << "  memory budget met at a price of " << r.bytePrice
       << " moved bytes per stored byte\n";
  for (const auto &approximation : r.approximations)
    os << "  note: " << approximation.message << "\n";
}

void SummaryPrinter::printGroups() {
  struct Row {
    std::string name, steps;
    unsigned ops = 0;
    int64_t bytes = 0;
  };
  std::vector<Row> rows;
  llvm::StringMap<unsigned> ids;
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    const graph::Op &op = g.getOp(i);
    StringRef name = op.hasGroup ? StringRef(op.group) : StringRef(op.name);
    auto [it, inserted] = ids.try_emplace(name, rows.size());
    if (inserted)
      rows.push_back({name.str(), formatSteps(p.ops[i]) + " (" + op.type + ")"});
    ++rows[it->second].ops;
    rows[it->second].bytes += p.ops[i].cost.total();
  }
  os << "\nper layer (forward op with its backward ops; steps of the forward "
        "op):\n";
  unsigned shown = 0;
  for (const Row &row : rows) {
    if (row.bytes == 0 && rows.size() > 40)
      continue;
    if (++shown > 60) {
      os << "  ... (" << rows.size() << " groups in all; layers moving no "
         << "bytes are not listed for large graphs)\n";
      break;
    }
    os << llvm::format("  %-40s %3u ops  %-34s %12s\n", row.name.c_str(),
                       row.ops, row.steps.c_str(),
                       formatBytes(row.bytes).c_str());
  }
}

std::string SummaryPrinter::explain(unsigned i) const {
  const plan::OpCost &cost = p.ops[i].cost;
  if (cost.produceBytes >= cost.fetchBytes)
    return "delivering its output";
  return "fetching inputs";
}

void SummaryPrinter::printTopSites() {
  std::vector<unsigned> order(g.getNumOps());
  for (unsigned i = 0, e = order.size(); i != e; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return p.ops[a].cost.total() > p.ops[b].cost.total();
  });
  os << "\ntop communication sites:\n";
  for (unsigned n = 0; n != std::min<size_t>(10, order.size()); ++n) {
    unsigned i = order[n];
    int64_t bytes = p.ops[i].cost.total();
    if (bytes == 0)
      break;
    os << llvm::format("  %-44s %-28s %12s %6.1f%%  %s\n",
                       g.getOp(i).name.c_str(), formatSteps(p.ops[i]).c_str(),
                       formatBytes(bytes).c_str(),
                       100.0 * bytes / std::max<int64_t>(1, p.commBytes),
                       explain(i).c_str());
  }
  int64_t nextStep = p.commBytes;
  for (const plan::OpPlan &op : p.ops)
    nextStep -= op.cost.total();
  if (nextStep)
    os << "  (and " << formatBytes(nextStep)
       << " moving updated parameters back to their layout for the next "
          "step)\n";
}

void SummaryPrinter::printRecompute() {
  const planner::RecomputeReport *r = in.recompute;
  if (!r)
    return;
  os << "recompute:  --peak-memory " << formatBytes(r->budget) << ": ";
  if (!r->chosen) {
    os << "the plan fits recomputing nothing\n";
    return;
  }
  os << r->chosen << " of " << r->candidates
     << " forward activations recomputed in the backward pass";
  if (r->family != "single ops")
    os << ", " << r->family << " (" << r->chosenTensors << " tensors, ";
  else
    os << " (";
  os << formatBytes(r->recomputedBytes) << ", " << r->probes
     << " plans evaluated)\n"
     << "            recomputing nothing: peak " << formatBytes(r->peakBefore)
     << ", comm_bytes " << r->commBefore
     << "; no plan recomputing nothing peaks below "
     << formatBytes(r->liveBound) << "\n"
     << "            recomputing:         peak " << formatBytes(r->peakAfter)
     << ", comm_bytes " << r->commAfter << "\n";
  printRecomputeFrontier();
}

void SummaryPrinter::printRecomputeFrontier() {
  // The plans evaluated that no other beats on both peak and bytes moved,
  // by peak.
  std::vector<planner::RecomputeReport::Point> points = in.recompute->points;
  std::sort(points.begin(), points.end(), [](const auto &a, const auto &b) {
    return std::make_tuple(a.peak, a.commBytes, a.recomputedBytes) <
           std::make_tuple(b.peak, b.commBytes, b.recomputedBytes);
  });
  os << "            frontier of the plans evaluated (peak, bytes moved):\n";
  os << llvm::format("              %14s %16s %10s %14s\n",
                     (const char *)"peak/wkr", (const char *)"comm_bytes",
                     (const char *)"recomputed", (const char *)"(bytes)");
  int64_t leastComm = INT64_MAX;
  for (const auto &point : points) {
    if (point.commBytes >= leastComm)
      continue;
    leastComm = point.commBytes;
    os << llvm::format("              %14s %16lld %10u %14s\n",
                       formatBytes(point.peak).c_str(),
                       (long long)point.commBytes, point.tensors,
                       formatBytes(point.recomputedBytes).c_str());
  }
}

void SummaryPrinter::print() {
  printTotals();
  printRecompute();
  printBaselines();
  printTopology();
  printSearch();
  printGroups();
  printTopSites();
}

void tofu::printPlanSummary(llvm::raw_ostream &os, const SummaryInput &in) {
  SummaryPrinter(os, in).print();
}
