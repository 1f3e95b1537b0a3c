//===- Topology.cpp - Links between workers and a step-time estimate ------===//
//
// This file implements parsing `--topology`, the factorings that nest in a
// topology, the per-level weights the searches charge, and the step-time
// estimate of a plan (Topology.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Topology.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Search.h"
#include "tofu/Planner/WorkModel.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::planner;

static llvm::Error topologyError(StringRef text, const Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "bad --topology '" + text + "': " + why +
                                     " (expected F1xF2x...:BW1,BW2,... with "
                                     "bandwidths in GB/s, e.g. 2x4:25,300)");
}

llvm::Expected<Topology> planner::parseTopology(StringRef text) {
  auto [shape, speeds] = text.split(':');
  if (speeds.empty())
    return topologyError(text, "no bandwidths after ':'");
  Topology topology;
  SmallVector<StringRef, 4> parts;
  shape.split(parts, 'x');
  for (StringRef part : parts) {
    unsigned f = 0;
    if (part.trim().getAsInteger(10, f) || f < 2)
      return topologyError(text, "group size '" + part +
                                     "' is not an integer of at least 2");
    topology.factors.push_back(f);
  }
  parts.clear();
  speeds.split(parts, ',');
  for (StringRef part : parts) {
    double gbps = 0;
    if (part.trim().getAsDouble(gbps) || !(gbps > 0))
      return topologyError(text, "bandwidth '" + part +
                                     "' is not a positive number of GB/s");
    topology.bandwidths.push_back(gbps * 1e9);
  }
  if (topology.bandwidths.size() != topology.factors.size())
    return topologyError(text, Twine(topology.factors.size()) +
                                   " levels but " +
                                   Twine(topology.bandwidths.size()) +
                                   " bandwidths");
  return topology;
}

std::string planner::formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

std::string planner::formatTopology(const Topology &topology) {
  std::string text = plan::formatLevels(topology.factors) + ":";
  for (unsigned l = 0, e = topology.bandwidths.size(); l != e; ++l)
    text += (l ? "," : "") + formatNumber(topology.bandwidths[l] / 1e9);
  return text + " GB/s";
}

std::vector<SmallVector<unsigned, 4>>
planner::getTopologyLevelCandidates(const Topology &topology,
                                    unsigned maxOrders,
                                    unsigned maxSingleLevel) {
  std::vector<SmallVector<unsigned, 4>> candidates{{}};
  for (unsigned f : topology.factors) {
    std::vector<SmallVector<unsigned, 4>> longer;
    for (const auto &prefix : candidates)
      for (const auto &inner :
           getLevelCandidates(f, maxOrders, maxSingleLevel)) {
        SmallVector<unsigned, 4> levels = prefix;
        levels.append(inner.begin(), inner.end());
        longer.push_back(std::move(levels));
      }
    candidates = std::move(longer);
  }
  return candidates;
}

SmallVector<unsigned, 4> planner::getLinksOfLevels(const Topology &topology,
                                                   ArrayRef<unsigned> levels) {
  // Plan level l splits groups [before, before * f) of the hierarchy: it
  // crosses every topology level whose span [start, start * factor)
  // meets that range, and moves its bytes over the slowest of them.
  SmallVector<unsigned, 4> links;
  uint64_t before = 1;
  for (unsigned f : levels) {
    uint64_t after = before * f, start = 1;
    unsigned slowest = 0;
    bool found = false;
    for (unsigned t = 0, e = topology.factors.size(); t != e; ++t) {
      uint64_t end = start * topology.factors[t];
      if (start < after && before < end &&
          (!found || topology.bandwidths[t] < topology.bandwidths[slowest])) {
        slowest = t;
        found = true;
      }
      start = end;
    }
    links.push_back(slowest);
    before = after;
  }
  return links;
}

SmallVector<double, 4> planner::getLevelWeights(const Topology &topology,
                                                ArrayRef<unsigned> levels) {
  double fastest = *std::max_element(topology.bandwidths.begin(),
                                     topology.bandwidths.end());
  SmallVector<double, 4> weights;
  for (unsigned t : getLinksOfLevels(topology, levels))
    weights.push_back(fastest / topology.bandwidths[t]);
  return weights;
}

/// `p` as a plan for its first `n` levels: each group of workers acts as
/// one, storing the bounding box of what its members store.
static plan::Plan cutPlan(const plan::Plan &p, unsigned n) {
  plan::Plan cut;
  cut.levels.assign(p.levels.begin(), p.levels.begin() + n);
  cut.workers = plan::getNumWorkers(cut.levels);
  unsigned members = p.workers / cut.workers;
  for (const plan::OpPlan &op : p.ops) {
    plan::OpPlan &c = cut.ops.emplace_back();
    c.name = op.name;
    c.steps.assign(op.steps.begin(), op.steps.begin() + n);
  }
  analysis::Region region;
  for (const plan::TensorPlan &tensor : p.tensors) {
    plan::TensorPlan &c = cut.tensors.emplace_back();
    c.name = tensor.name;
    // A layout's group stores its first `n` levels' region: the members'
    // nested even parts tile it (an empty region where they all store
    // nothing, which costs as nothing stored).
    if (tensor.regions.empty()) {
      c.layout.emplace(tensor.layout->begin(), tensor.layout->begin() + n);
      c.shape = tensor.shape;
      continue;
    }
    c.regions.resize(cut.workers);
    for (unsigned w = 0; w != p.workers; ++w) {
      if (!plan::getStoredRegion(p, tensor, w, region) ||
          (!region.empty() && plan::getVolume(region) == 0))
        continue;
      auto &box = c.regions[w / members];
      if (!box) {
        box = region;
        continue;
      }
      for (unsigned d = 0, e = region.size(); d != e; ++d) {
        (*box)[d].lo = std::min((*box)[d].lo, region[d].lo);
        (*box)[d].hi = std::max((*box)[d].hi, region[d].hi);
      }
    }
  }
  return cut;
}

llvm::Expected<StepEstimate> planner::estimateStep(const PlanningProblem &problem,
                                                   const plan::Plan &p,
                                                   const Topology &topology,
                                                   bool costsRecorded) {
  if (plan::getNumWorkers(topology.factors) != p.workers)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the topology has " + Twine(plan::getNumWorkers(topology.factors)) +
            " workers, the plan " + Twine(p.workers));
  StepEstimate estimate;
  estimate.links = getLinksOfLevels(topology, p.levels);
  // Bytes and messages per level, from the plans cut to 1, 2, ... levels.
  std::vector<int64_t> lastOpBytes(p.ops.size(), 0);
  int64_t lastBytes = 0;
  for (unsigned n = 1, e = p.levels.size(); n <= e; ++n) {
    // The whole plan's costs, where recorded, are those evaluatePlan gives.
    CostReport recorded;
    if (n == e && costsRecorded) {
      recorded.commBytes = p.commBytes;
      for (const plan::OpPlan &op : p.ops)
        recorded.ops.push_back(op.cost);
    }
    auto costs = n == e && costsRecorded
                     ? llvm::Expected<CostReport>(std::move(recorded))
                     : evaluatePlan(problem, n == e ? p : cutPlan(p, n),
                                    Peaks::Skip);
    if (!costs)
      return costs.takeError();
    unsigned messages = 0;
    for (unsigned i = 0, m = p.ops.size(); i != m; ++i) {
      messages += costs->ops[i].total() > lastOpBytes[i];
      lastOpBytes[i] = costs->ops[i].total();
    }
    int64_t bytes = std::max<int64_t>(costs->commBytes - lastBytes, 0);
    lastBytes = costs->commBytes;
    estimate.levelBytes.push_back(bytes);
    double bandwidth = topology.bandwidths[estimate.links[n - 1]];
    estimate.communicationSeconds += double(bytes) / p.workers / bandwidth +
                                     messages * topology.latency;
  }
  // Compute: the most loaded worker's iteration points, two flops each.
  auto busiest = getBusiestWorkerSeconds(
      problem, p,
      [&](unsigned, const WorkModel &work, ArrayRef<analysis::Range> box) {
        return 2 * work.getPoints(box) / topology.flops;
      });
  if (!busiest)
    return busiest.takeError();
  estimate.computeSeconds = *busiest;
  return estimate;
}
