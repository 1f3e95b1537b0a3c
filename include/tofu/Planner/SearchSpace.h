//===- SearchSpace.h - Decisions and their cost tables -----------*- C++ -*-===//
//
// This file declares SearchSpace: the factor graph (Elimination.h) of one
// search problem. It decides some levels of every op and tensor, given the
// decisions of the levels before them, and measures the cost model's terms
// over a set of workers, scaled by a weight:
//  - the recursive search decides one level at a time and measures the
//    workers of the first group of the levels above (its cost times the
//    number of groups);
//  - the exact search decides every level at once over every worker.
// Each op decision is a tuple of steps (one per decided level), each tensor
// decision a tuple of dimensions; the tables are the fetch, produce and
// next-step terms of docs/CostModel.md, plus an optional price per stored
// byte (the memory budget's Lagrange multiplier).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_SEARCHSPACE_H
#define TOFU_PLANNER_SEARCHSPACE_H

#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/Coarsening.h"
#include "tofu/Planner/Elimination.h"
#include "tofu/Planner/Search.h"

#include <map>
#include <tuple>

namespace tofu {
namespace planner {

/// What one search decides, and how it measures.
struct SearchFrame {
  /// The levels of the plan so far, outermost first (decided ones included).
  SmallVector<unsigned, 4> levels;
  /// The levels decided here are [firstFree, firstFree + numFree); the
  /// others are fixed by `prior`. numFree 0 means every level from
  /// firstFree on (the recursive and exact searches); refinement decides
  /// one level between fixed ones.
  unsigned firstFree = 0;
  unsigned numFree = 0;
  /// Decisions of the fixed levels (may have more levels than needed).
  const Assignment *prior = nullptr;
  /// The workers measured, as digits (one per level of `levels`).
  std::vector<SmallVector<unsigned, 4>> workers;
  /// Each measured cost is multiplied by this.
  double weight = 1;
  /// Tensors may be replicated at a level (memory-budgeted plans).
  bool replicateTensors = false;
  /// Price per byte a measured worker stores (the memory multiplier).
  double bytePrice = 0;
  /// Per tensor, a dimension it is split along at every free level, or -1
  /// (null: none pinned).
  const std::vector<int> *pinnedTensorDims = nullptr;
  /// Ops and tensors of one class take one decision (null: each its own).
  const Coarsening *coarsening = nullptr;
  /// Leave out decisions that divide a dimension into too uneven parts
  /// where the shapes allow (unevenParts); the exact search
  /// keeps every decision.
  bool balanceParts = false;
  /// With balanceParts, also leave out parts more uneven than
  /// kMaxPartOverShare (unevenParts).
  bool balanceShares = false;
};

/// Every worker of `levels`: all digit tuples, worker order.
std::vector<SmallVector<unsigned, 4>> getAllWorkers(ArrayRef<unsigned> levels);

/// The factor graph of one search and the translation of its optimum back
/// into decisions.
class SearchSpace {
public:
  SearchSpace(const PlanningProblem &problem, SearchFrame frame);

  /// Builds the decisions and every cost table. Returns false if a domain
  /// is too large for the factor graph (more than 65535 tuples).
  bool build();
  FactorGraph &getFactorGraph() { return graph; }
  /// Writes the decided levels of `choice` into `out` (sized by the caller
  /// for `frame.levels`).
  void apply(ArrayRef<unsigned> choice, Assignment &out) const;

  unsigned getNumDecisions() const { return graph.getNumVariables(); }

private:
  unsigned getEndFree() const {
    return frame.numFree ? frame.firstFree + frame.numFree
                         : unsigned(frame.levels.size());
  }
  /// The fixed levels' part of a decision tuple (what a class's decision
  /// is keyed by).
  SmallVector<uint8_t, 4> getFixedPart(ArrayRef<uint8_t> tuple) const;
  /// The fixed levels' decisions of a tuple of `frame.prior` (which may
  /// have more levels than the frame), as enumerateFreeTuples reads them.
  SmallVector<uint8_t, 4> getPriorFixedPart(ArrayRef<uint8_t> prior) const;
  /// Every tuple whose fixed levels are those of `fixed` (a full tuple from
  /// `prior`), the free ones below `radix`.
  std::vector<SmallVector<uint8_t, 4>>
  enumerateFreeTuples(ArrayRef<uint8_t> fixed, unsigned radix) const;
  /// Whether `dims` (per level, the dimension of `full` it divides, -1
  /// from getDim for none) divides at a free level a dimension into parts
  /// too uneven for balance: the part on the first worker, after the
  /// levels before, is shorter than the level's factor (some worker gets
  /// an empty part and another the whole), or after that level it is more
  /// than kMaxPartOverShare of an even share of the dimension (only with
  /// frame.balanceShares; 768 = 3 x 256 rows over 512 workers: parts of 2
  /// and 1 rows, 1.33x). The larger
  /// parts fall on the same workers for every such tensor
  /// (docs/Planner.md, "Balanced memory").
  bool unevenParts(ArrayRef<analysis::Range> full, ArrayRef<uint8_t> dims,
                   llvm::function_ref<int(uint8_t)> getDim) const;
  /// The most a first worker's part may exceed an even share of a
  /// dimension by (numerator, denominator: 1.05x) before unevenParts
  /// counts the split as uneven.
  static constexpr std::pair<int64_t, int64_t> kMaxPartOverShare = {21, 20};
  /// Drops the tuples of `domain` that divide into uneven parts, where some
  /// tuple divides (`divides`) at every free level without doing so.
  void keepBalancedTuples(
      std::vector<SmallVector<uint8_t, 4>> &domain,
      llvm::function_ref<bool(ArrayRef<uint8_t>)> belowFactor,
      llvm::function_ref<bool(ArrayRef<uint8_t>)> divides) const;
  void buildOpDomain(unsigned i);
  /// Tensor `t`'s tuples into `domain`.
  void buildTensorDomain(unsigned t,
                         std::vector<SmallVector<uint8_t, 4>> &domain) const;
  /// [config][worker]: each decision tuple's regions on the measured
  /// workers (only needed while an op's tables are made).
  using OpRegions = std::vector<std::vector<analysis::WorkerRegions>>;
  void computeOpRegions(unsigned i, OpRegions &regions) const;
  /// Tensor `t`'s regions for each tuple of `domain` into `regions`.
  void computeTensorRegions(
      unsigned t, ArrayRef<SmallVector<uint8_t, 4>> domain,
      std::vector<std::vector<analysis::Region>> &regions) const;
  /// The kind of tensor `t`: the first tensor's of the same shape, pinned
  /// dimension and decisions of the fixed levels, whose tuples and regions
  /// it shares (they depend on nothing else); a new one if none.
  unsigned getTensorKind(unsigned t);
  const std::vector<SmallVector<uint8_t, 4>> &getTensorDomain(unsigned t) const {
    return kindDomains[tensorKinds[t]];
  }
  const std::vector<std::vector<analysis::Region>> &
  getTensorRegions(unsigned t) const {
    return kindRegions[tensorKinds[t]];
  }
  unsigned getTensorVar(unsigned t);
  unsigned getOpVar(unsigned i);
  /// The fetch tables of op `i` (one per input position), then its produce
  /// table; each is over the op's decision and that tensor's.
  using OpTables = std::vector<std::vector<double>>;
  OpTables computeOpTables(unsigned i, const OpRegions &regions) const;
  /// What op `i`'s tables are a function of: its operator, binding (shapes
  /// and params), strategies and fixed levels' steps (so its domain and
  /// regions), and each input's and the output's tensor kind and element
  /// size. Ops with equal keys share their tables: an uncoarsened search
  /// (the Megatron baseline's) computes them once per repeated layer's op.
  std::vector<int64_t> getOpTableKey(unsigned i) const;
  std::vector<double> computeNextStepTable(unsigned t) const;
  void addStoragePrices(unsigned t);
  /// Adds `table` (op or tensor decision `a` by tensor decision `b`) `times`
  /// times.
  void addTable(unsigned a, unsigned b, std::vector<double> table,
                unsigned times);

  const PlanningProblem &problem;
  SearchFrame frame;
  FactorGraph graph;
  /// Full step / dimension tuples (every level of the frame): per op, and
  /// per tensor kind (getTensorKind).
  std::vector<std::vector<SmallVector<uint8_t, 4>>> opDomains, kindDomains;
  std::vector<unsigned> tensorKinds;
  std::map<std::tuple<SmallVector<int64_t, 4>, int, SmallVector<uint8_t, 4>>,
           unsigned>
      kindOf;
  std::vector<unsigned> opVars, tensorVars;
  /// Decision of each (class, decisions of the fixed levels).
  std::map<std::pair<unsigned, SmallVector<uint8_t, 4>>, unsigned> opVarOf,
      tensorVarOf;
  /// [tensor kind][config][worker].
  std::vector<std::vector<std::vector<analysis::Region>>> kindRegions;
};

/// Solves `frame` by elimination with the search settings and writes its
/// decisions into `assignment`; an error when the factor graph is too large.
/// `cost`, if given, receives the optimum's objective over the measured
/// workers (scaled by the frame's weight, storage prices included).
llvm::Error solveFrame(const PlanningProblem &problem, SearchFrame frame,
                       const SearchSettings &settings, Assignment &assignment,
                       SearchStats &stats, double *cost = nullptr);

/// An assignment for `levels` with no decision yet.
Assignment makeUndecided(const PlanningProblem &problem,
                         ArrayRef<unsigned> levels);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_SEARCHSPACE_H
