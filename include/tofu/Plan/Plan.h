//===- Plan.h - The partition plan IR ---------------------------*- C++ -*-===//
//
// This file declares the plan IR, the contract between the planner and the
// runtime (docs/PlanFormat.md): K workers factored into levels, for every
// op of the graph one step per level (split or reduce an index variable of
// its TDL operator, or replicate), and for every tensor the region each
// worker stores (a compact layout, or a list of regions; read through
// plan::getStoredRegion). It also carries the numbers the cost model assigns to the
// plan (docs/CostModel.md), so that emitters print them without
// recomputing. The IR is plain data: it knows nothing of the search.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLAN_PLAN_H
#define TOFU_PLAN_PLAN_H

#include "tofu/Analysis/Regions.h"
#include "tofu/Support/LLVM.h"

#include "llvm/ADT/Optional.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tofu {
namespace plan {

using analysis::Range;
using analysis::Region;

/// What an op does at one level of the worker hierarchy.
struct Step {
  enum class Kind { Split, Reduce, Replicate };
  Kind kind = Kind::Replicate;
  /// The index variable split or reduced (empty for Replicate).
  std::string var;

  static Step split(StringRef var) { return {Kind::Split, var.str()}; }
  static Step reduce(StringRef var) { return {Kind::Reduce, var.str()}; }
  static Step replicate() { return {Kind::Replicate, ""}; }
  bool operator==(const Step &rhs) const {
    return kind == rhs.kind && var == rhs.var;
  }
};

/// "split:V", "reduce:V" or "replicate".
std::string formatStep(const Step &step);
/// Parses formatStep's spelling; None if malformed.
llvm::Optional<Step> parseStep(StringRef text);

/// Bytes the cost model charges to one op (fetches of its inputs and the
/// delivery of its output), for reports.
struct OpCost {
  int64_t fetchBytes = 0;
  int64_t produceBytes = 0;
  int64_t total() const { return fetchBytes + produceBytes; }
};

/// The plan of one op: its name and one step per level, outermost first.
struct OpPlan {
  std::string name;
  SmallVector<Step, 4> steps;
  /// Filled by the planner (not part of plan JSON).
  OpCost cost;
};

/// A compact layout's step that replicates (any value >= the tensor's rank
/// does; plans use this one).
constexpr uint8_t kReplicateDim = 255;

/// Where one tensor lives: per worker, the region it stores (None: nothing).
/// A plan gives it as the `regions` list, as a compact `layout`, or both
/// (then they must agree). Readers take a worker's region through
/// plan::getStoredRegion (tofu/Plan/Layouts.h), which derives it from the
/// layout when no list is held: the planner's plans hold layouts alone, so
/// a plan's memory grows with levels x tensors, not workers x tensors.
struct TensorPlan {
  std::string name;
  /// One per worker; empty when only `layout` gives the regions.
  std::vector<llvm::Optional<Region>> regions;
  /// Per level, outermost first: the dimension split at that level, or
  /// kReplicateDim (docs/PlanFormat.md, "Compact layouts").
  llvm::Optional<SmallVector<uint8_t, 4>> layout;
  /// The tensor's shape, which the layout's regions are derived from: set
  /// with the layout by the planner (materializePlan) and by
  /// plan::checkLayouts for plans read from files.
  SmallVector<int64_t, 4> shape;
};

/// The machine a plan is made for: nested groups of workers joined by
/// links of one bandwidth per level (docs/Planner.md, "Topology").
struct Topology {
  /// Group sizes, outermost first; their product is the number of workers.
  SmallVector<unsigned, 4> factors;
  /// Bytes per second of one link at each level of `factors`.
  SmallVector<double, 4> bandwidths;
  /// Seconds each message pays on any link (the alpha of alpha-beta).
  double latency = 5e-6;
  /// Floating-point operations per second of one worker.
  double flops = 100e12;
};

/// What a plan's step is estimated to take on a topology.
struct StepEstimate {
  /// Per plan level: the bytes crossing it (see estimateStep).
  std::vector<int64_t> levelBytes;
  /// Per plan level: the topology level its bytes travel on.
  SmallVector<unsigned, 4> links;
  double communicationSeconds = 0;
  double computeSeconds = 0;
  double totalSeconds() const { return communicationSeconds + computeSeconds; }
};

/// What the search that made a plan did (docs/PlanFormat.md, "search"):
/// which factorings of K it tried and every approximation it made.
struct SearchRecord {
  /// One approximation: a stable identifier (`refinement-off`, ...) and a
  /// sentence for people.
  struct Approximation {
    std::string kind;
    std::string message;
  };
  /// "recursive" or "exact".
  std::string kind;
  /// True when the plan is the cost model's optimum over `factorings`
  /// (only the exact search, which then made no approximation).
  bool exact = false;
  /// The factorings of K tried, in order, outermost level first.
  std::vector<SmallVector<unsigned, 4>> factorings;
  std::vector<Approximation> approximations;
};

/// A whole plan.
struct Plan {
  unsigned workers = 1;
  /// Level factors, outermost first; their product is `workers`.
  SmallVector<unsigned, 4> levels;
  /// One per graph op, in graph order.
  std::vector<OpPlan> ops;
  /// One per graph tensor, in graph order.
  std::vector<TensorPlan> tensors;

  /// The cost model's numbers (docs/CostModel.md), filled by the planner.
  int64_t commBytes = 0;
  std::vector<int64_t> residentBytesPerWorker;
  std::vector<int64_t> peakBytesPerWorker;
  /// The topology the plan was made for, and its estimated step there.
  llvm::Optional<Topology> topology;
  llvm::Optional<StepEstimate> estimate;
  /// What the search did; None for plans no search made (baselines).
  llvm::Optional<SearchRecord> search;
  /// Forward activations recomputed in the backward pass, by name
  /// (tofu/Planner/Recompute.h); empty: none, and the plan is the graph's
  /// own.
  std::vector<std::string> recompute;
  /// Fields beyond the contract a baseline records (docs/PlanFormat.md):
  /// a member name and its value as JSON text (`"megatron_3d": {...}`),
  /// written after the estimate; readers ignore them.
  std::vector<std::pair<std::string, std::string>> extraFields;
};

/// "2x2x2"; "1" for no levels (one worker).
std::string formatLevels(ArrayRef<unsigned> levels);
/// The number of workers of `levels` (1 for none).
unsigned getNumWorkers(ArrayRef<unsigned> levels);
/// Worker `w`'s digit at each level (`w = ((c1 * f2 + c2) * f3 + c3) ...`).
void getWorkerDigits(ArrayRef<unsigned> levels, unsigned w,
                     SmallVectorImpl<unsigned> &digits);
/// Turns `digits` (a worker's, getWorkerDigits) into the next worker's and
/// returns the highest level whose digit changed: the levels inside it
/// went back to 0. The last worker has no next one.
unsigned nextWorkerDigits(ArrayRef<unsigned> levels,
                          llvm::MutableArrayRef<unsigned> digits);

/// Elements of a region (0 if any range is empty; 1 for a scalar).
int64_t getVolume(ArrayRef<Range> region);
/// Elements of the intersection of two regions of the same rank.
int64_t getIntersectionVolume(ArrayRef<Range> a, ArrayRef<Range> b);
/// Elements of the union of regions of the same rank `rank`.
int64_t getUnionVolume(ArrayRef<Region> regions, unsigned rank);

} // namespace plan
} // namespace tofu

#endif // TOFU_PLAN_PLAN_H
