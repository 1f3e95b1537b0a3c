//===- Topology.h - Links between workers and a step-time estimate -*- C++ -*-===//
//
// This file declares the hierarchical machine a plan may be made for
// (docs/Planner.md, "Topology"): K workers as nested groups, outermost
// first, each level of the hierarchy joined by links of one bandwidth
// (`--topology 2x4:25,300`: 2 machines of 4 GPUs, 25 GB/s between machines,
// 300 GB/s inside one). The searches weight each plan level's bytes by the
// slowness of the link it crosses, so the level that moves the fewest
// bytes lands on the slowest link; the estimate turns a plan into seconds
// per training step (alpha-beta communication plus a compute estimate).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_TOPOLOGY_H
#define TOFU_PLANNER_TOPOLOGY_H

#include "tofu/Planner/PlanningProblem.h"

#include "llvm/Support/Error.h"

namespace tofu {
namespace planner {

using plan::StepEstimate;
using plan::Topology;

/// Parses `F1xF2x...:BW1,BW2,...` (bandwidths in GB/s, 1 GB = 10^9 bytes).
llvm::Expected<Topology> parseTopology(StringRef text);

/// `value` in the shortest of fixed and scientific notation ("%g").
std::string formatNumber(double value);

/// "2x4:25,300 GB/s".
std::string formatTopology(const Topology &topology);

/// The factorings of the workers that nest in the topology: each topology
/// level factored into the orders getLevelCandidates gives it (with these
/// caps).
std::vector<SmallVector<unsigned, 4>>
getTopologyLevelCandidates(const Topology &topology, unsigned maxOrders = 3,
                           unsigned maxSingleLevel = 16);

/// For each plan level, the topology level of the slowest link it crosses
/// (a plan level that splits machines moves its bytes between machines).
SmallVector<unsigned, 4> getLinksOfLevels(const Topology &topology,
                                          ArrayRef<unsigned> levels);

/// How much more a byte costs at each plan level than on the fastest link
/// (all 1 when every link is as fast).
SmallVector<double, 4> getLevelWeights(const Topology &topology,
                                       ArrayRef<unsigned> levels);

/// Estimates a step of `p` (whose costs are recorded) on `topology`:
///  - the bytes of level l are the comm_bytes of the plan cut to its first
///    l + 1 levels (each group of workers acting as one) minus those of the
///    plan cut to its first l levels; they sum to comm_bytes;
///  - communication: each level's bytes spread evenly over the K workers'
///    links of that level, at its bandwidth, plus one latency per op that
///    moves bytes and per level;
///  - compute: the most loaded worker's work points, two floating-point
///    operations each: per op, one per output element plus, per reduction,
///    one per combination of the index variables it uses (a one-hot
///    reduction, a gather or scatter-add in TDL, counts the elements it
///    reads and writes instead);
///  - no overlap of communication and computation.
/// With `costsRecorded`, `p`'s comm_bytes and per-op costs are already the
/// cost model's (recordCosts), and the whole plan is not evaluated again.
llvm::Expected<StepEstimate> estimateStep(const PlanningProblem &problem,
                                          const plan::Plan &p,
                                          const Topology &topology,
                                          bool costsRecorded = false);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_TOPOLOGY_H
