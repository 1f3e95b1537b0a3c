//===- Elimination.h - Exact min-sum search by variable elimination -*- C++ -*-===//
//
// This file declares the dynamic program at the heart of the search: a
// factor graph of discrete decisions (ops' steps, tensors' layouts) and
// cost tables over one or more of them, minimised exactly by eliminating
// decisions one at a time. It generalises OptCNN's two rules: eliminating a
// decision with two neighbours folds it into a new pairwise table (node
// elimination), and tables over the same decisions are summed into one
// (edge elimination); a decision with more neighbours yields a table over
// all of them, so every graph reduces, and the result is the exact optimum
// as long as the tables stay within a size limit. Decisions are eliminated
// cheapest table first (ties by id, so the result is deterministic).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_ELIMINATION_H
#define TOFU_PLANNER_ELIMINATION_H

#include "tofu/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <vector>

namespace tofu {
namespace planner {

/// Decisions with finite domains and additive cost tables.
class FactorGraph {
public:
  /// Adds a decision with `domain` choices (at most 65535) and returns its id.
  unsigned addVariable(unsigned domain);
  unsigned getNumVariables() const { return domains.size(); }
  unsigned getDomain(unsigned var) const { return domains[var]; }

  /// Adds a cost for each choice of `var`.
  void addUnary(unsigned var, ArrayRef<double> costs);
  /// Adds a table over two decisions, `costs[a * domain(b) + b']`.
  void addPairwise(unsigned a, unsigned b, ArrayRef<double> costs);

  struct Stats {
    unsigned eliminated = 0;
    /// Largest table built while eliminating.
    uint64_t largestTable = 0;
    /// Decisions fixed greedily because eliminating would have needed too
    /// large a table (0: the result is exact).
    unsigned conditioned = 0;
  };

  /// Finds a minimum-cost choice for every decision. When eliminating
  /// would need a table of more than `maxTableEntries`, it either fails
  /// (returns false, `choice` untouched) or, with `allowConditioning`,
  /// fixes the decision with the most neighbours to its greedily best
  /// choice and goes on: the result is then a good choice, not the proven
  /// optimum (Stats::conditioned says how many were fixed).
  bool minimize(std::vector<unsigned> &choice, double &cost,
                uint64_t maxTableEntries = uint64_t(1) << 24,
                bool allowConditioning = false);
  const Stats &getStats() const { return stats; }

  /// The total cost of a complete choice (for tests and checks).
  double evaluate(ArrayRef<unsigned> choice) const;

private:
  struct Factor {
    SmallVector<unsigned, 4> vars; // sorted ascending
    std::vector<double> table;     // last var fastest
    bool alive = true;
  };
  struct Record {
    unsigned var;
    SmallVector<unsigned, 4> scope;
    std::vector<uint16_t> best;
  };

  /// Adds a table; one over the same decisions as a live table is summed
  /// with it (into the old one while building, into the new one while
  /// eliminating, so that the tables given by the caller stay intact).
  void addFactor(SmallVector<unsigned, 4> vars, std::vector<double> table);
  uint64_t eliminationCost(unsigned var, SmallVectorImpl<unsigned> &scope);
  bool eliminate(unsigned var, uint64_t maxTableEntries);
  /// Fixes the live decision with the most neighbours (returned, its
  /// neighbours in `neighbours`).
  unsigned conditionHub(SmallVectorImpl<unsigned> &neighbours);

  std::vector<unsigned> domains;
  std::vector<std::vector<double>> unary;
  /// The caller's unary costs (set by minimize; `unary` grows while
  /// eliminating).
  std::vector<std::vector<double>> givenUnary;
  std::vector<Factor> factors;
  std::vector<SmallVector<unsigned, 4>> varFactors;
  std::map<SmallVector<unsigned, 4>, unsigned> factorByScope;
  std::vector<bool> eliminated;
  /// eliminationCost's marks: decisions already in the scope it builds
  /// carry its current stamp.
  std::vector<unsigned> mark;
  unsigned stamp = 0;
  std::vector<Record> records;
  double constant = 0;
  /// Factors below this index are the caller's (set by minimize).
  unsigned numGiven = ~0u;
  Stats stats;
};

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_ELIMINATION_H
