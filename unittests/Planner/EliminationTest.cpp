//===- EliminationTest.cpp - The elimination DP against brute force -------===//
//
// Factor graphs whose optimum is worked out by hand, and random ones small
// enough to enumerate: the elimination's optimum must equal the minimum,
// and conditioning (when the table limit is tiny) must still return a
// complete choice costing what it says. Every cost is computed by the
// test's own copy of the tables (Model), never by FactorGraph::evaluate,
// which minimize itself uses.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Elimination.h"
#include "tofu/Plan/Plan.h"

#include "gtest/gtest.h"

#include <random>

using namespace tofu;
using namespace tofu::planner;

namespace {

/// The test's own copy of a factor graph's tables, and what a choice costs
/// under them.
struct Model {
  struct Table {
    unsigned a, b; // b == a for a unary table
    std::vector<double> costs;
  };
  std::vector<unsigned> domains;
  std::vector<Table> tables;

  double evaluate(const std::vector<unsigned> &choice) const {
    double total = 0;
    for (const Table &t : tables)
      total += t.a == t.b ? t.costs[choice[t.a]]
                          : t.costs[choice[t.a] * domains[t.b] + choice[t.b]];
    return total;
  }
  /// The minimum over every choice, by enumeration.
  double bruteForce() const {
    unsigned n = domains.size();
    std::vector<unsigned> choice(n, 0);
    double best = std::numeric_limits<double>::infinity();
    while (true) {
      best = std::min(best, evaluate(choice));
      unsigned k = 0;
      while (k != n && ++choice[k] == domains[k])
        choice[k++] = 0;
      if (k == n)
        return best;
    }
  }
};

/// Adds the same variables and tables to `g` and `model`.
struct Builder {
  FactorGraph g;
  Model model;
  unsigned variable(unsigned domain) {
    model.domains.push_back(domain);
    return g.addVariable(domain);
  }
  void unary(unsigned a, std::vector<double> costs) {
    g.addUnary(a, costs);
    model.tables.push_back({a, a, std::move(costs)});
  }
  void pairwise(unsigned a, unsigned b, std::vector<double> costs) {
    g.addPairwise(a, b, costs);
    model.tables.push_back({a, b, std::move(costs)});
  }
};

Builder makeRandomGraph(std::mt19937 &rng, unsigned numVars,
                        unsigned numTables) {
  Builder b;
  std::uniform_int_distribution<unsigned> domain(1, 4);
  for (unsigned v = 0; v != numVars; ++v)
    b.variable(domain(rng));
  std::uniform_int_distribution<unsigned> pick(0, numVars - 1);
  std::uniform_real_distribution<double> cost(0, 100);
  for (unsigned i = 0; i != numTables; ++i) {
    unsigned x = pick(rng), y = pick(rng);
    if (x == y) {
      std::vector<double> unary(b.model.domains[x]);
      for (double &c : unary)
        c = cost(rng);
      b.unary(x, std::move(unary));
      continue;
    }
    std::vector<double> table(b.model.domains[x] * b.model.domains[y]);
    for (double &c : table)
      c = std::floor(cost(rng));
    b.pairwise(x, y, std::move(table));
  }
  return b;
}

TEST(EliminationTest, ChainWorkedByHand) {
  // a (2 choices) - b (3) - c (2), cost(a, b, c) = ua[a] + ab[a][b] +
  // bc[b][c] + uc[c]:
  //   ua = [1, 0]; ab = [[0, 5, 2], [4, 1, 3]];
  //   bc = [[2, 0], [0, 3], [1, 1]]; uc = [0, 2].
  // a = 0 (1): b = 0 (0): c = 0 -> 2 + 0, c = 1 -> 0 + 2: total 3;
  //            b = 1 (5): at least 6; b = 2 (2): c = 0 -> 1: total 4.
  // a = 1 (0): b = 0 (4): at least 6; b = 1 (1): c = 0 -> 0 + 0: total 1;
  //            b = 2 (3): c = 0 -> 1: total 4.
  // The optimum is a = 1, b = 1, c = 0 at 1, the only choice below 3.
  Builder b;
  unsigned a = b.variable(2), m = b.variable(3), c = b.variable(2);
  b.unary(a, {1, 0});
  b.pairwise(a, m, {0, 5, 2, 4, 1, 3});
  b.pairwise(m, c, {2, 0, 0, 3, 1, 1});
  b.unary(c, {0, 2});
  std::vector<unsigned> choice;
  double cost = -1;
  ASSERT_TRUE(b.g.minimize(choice, cost));
  EXPECT_EQ(cost, 1);
  EXPECT_EQ(choice, (std::vector<unsigned>{1, 1, 0}));
  // FactorGraph::evaluate on choices worked above.
  EXPECT_EQ(b.g.evaluate({0, 0, 0}), 3);
  EXPECT_EQ(b.g.evaluate({0, 2, 1}), 1 + 2 + 1 + 2);
  EXPECT_EQ(b.g.evaluate({1, 0, 1}), 0 + 4 + 0 + 2);
}

TEST(EliminationTest, TablesOverTheSamePairAreSummed) {
  // Two tables over (a, b), 2 x 2: [[0, 3], [2, 0]] + [[4, 0], [0, 5]] =
  // [[4, 3], [2, 5]]: the optimum is a = 1, b = 0 at 2 (either table alone
  // would pick a diagonal at 0).
  Builder b;
  unsigned a = b.variable(2), c = b.variable(2);
  b.pairwise(a, c, {0, 3, 2, 0});
  b.pairwise(a, c, {4, 0, 0, 5});
  std::vector<unsigned> choice;
  double cost = -1;
  ASSERT_TRUE(b.g.minimize(choice, cost));
  EXPECT_EQ(cost, 2);
  EXPECT_EQ(choice, (std::vector<unsigned>{1, 0}));
}

TEST(EliminationTest, HubWithThreeNeighboursWorkedByHand) {
  // A hub h (2 choices) tied to x, y, z (2 each) by the same table
  // [[0, 4], [3, 0]] (agreeing costs 0, h = 0 with 1 costs 4, h = 1 with 0
  // costs 3), and unary costs x = [0, 1], y = [0, 1], z = [5, 0], h = [2,
  // 0]. h = 0: x = 0, y = 0 (0 each), z: 0 + 5 or 4 + 0 -> 4; total 2 + 4
  // = 6. h = 1: x: 3 + 0 or 0 + 1 -> 1; y likewise 1; z = 1: 0; total 0 +
  // 2 = 2. The optimum: h = 1, x = y = z = 1, at 2.
  Builder b;
  unsigned h = b.variable(2);
  std::vector<unsigned> leaves = {b.variable(2), b.variable(2), b.variable(2)};
  std::vector<std::vector<double>> unaries = {{0, 1}, {0, 1}, {5, 0}};
  for (unsigned i = 0; i != 3; ++i) {
    b.pairwise(h, leaves[i], {0, 4, 3, 0});
    b.unary(leaves[i], unaries[i]);
  }
  b.unary(h, {2, 0});
  std::vector<unsigned> choice;
  double cost = -1;
  ASSERT_TRUE(b.g.minimize(choice, cost));
  EXPECT_EQ(cost, 2);
  EXPECT_EQ(choice, (std::vector<unsigned>{1, 1, 1, 1}));
}

TEST(EliminationTest, MatchesBruteForceOnRandomGraphs) {
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial != 200; ++trial) {
    Builder b = makeRandomGraph(rng, 2 + trial % 8, 3 + trial % 17);
    double expected = b.model.bruteForce();
    std::vector<unsigned> choice;
    double cost = 0;
    ASSERT_TRUE(b.g.minimize(choice, cost));
    EXPECT_DOUBLE_EQ(cost, expected) << "trial " << trial;
    // The choice returned achieves it under the test's own tables.
    ASSERT_EQ(choice.size(), b.model.domains.size());
    EXPECT_DOUBLE_EQ(b.model.evaluate(choice), expected) << "trial " << trial;
    EXPECT_EQ(b.g.getStats().conditioned, 0u);
  }
}

TEST(EliminationTest, FailsOrConditionsBeyondTheTableLimit) {
  // A clique of 6 decisions of 4 choices needs a 4^5 table.
  std::mt19937 rng(3);
  auto makeClique = [&] {
    Builder b;
    for (unsigned v = 0; v != 6; ++v)
      b.variable(4);
    std::uniform_real_distribution<double> cost(0, 10);
    for (unsigned x = 0; x != 6; ++x)
      for (unsigned y = x + 1; y != 6; ++y) {
        std::vector<double> table(16);
        for (double &c : table)
          c = cost(rng);
        b.pairwise(x, y, std::move(table));
      }
    return b;
  };
  Builder strict = makeClique();
  std::vector<unsigned> choice;
  double cost = 0;
  EXPECT_FALSE(strict.g.minimize(choice, cost, 64, /*allowConditioning=*/false));
  EXPECT_TRUE(choice.empty());

  Builder relaxed = makeClique();
  double optimum = relaxed.model.bruteForce();
  ASSERT_TRUE(relaxed.g.minimize(choice, cost, 64, /*allowConditioning=*/true));
  EXPECT_GT(relaxed.g.getStats().conditioned, 0u);
  ASSERT_EQ(choice.size(), 6u);
  // The cost reported is what the choice costs under the test's tables.
  EXPECT_DOUBLE_EQ(relaxed.model.evaluate(choice), cost);
  EXPECT_GE(cost, optimum);
}

TEST(PlanArithmeticTest, PartsAndVolumes) {
  EXPECT_EQ(analysis::getEvenPart({0, 5}, 2, 0), (analysis::Range{0, 3}));
  EXPECT_EQ(analysis::getEvenPart({0, 5}, 2, 1), (analysis::Range{3, 5}));
  EXPECT_EQ(analysis::getEvenPart({0, 1}, 2, 1), (analysis::Range{1, 1}));
  EXPECT_EQ(analysis::getEvenPart({10, 17}, 3, 2), (analysis::Range{15, 17}));
  SmallVector<unsigned, 4> digits;
  plan::getWorkerDigits({2, 3}, 4, digits);
  EXPECT_EQ(digits, (SmallVector<unsigned, 4>{1, 1}));
  // Two overlapping 4x4 squares: 16 + 16 - 4.
  SmallVector<plan::Region, 2> squares = {{{0, 4}, {0, 4}}, {{2, 6}, {2, 6}}};
  EXPECT_EQ(plan::getUnionVolume(squares, 2), 28);
  EXPECT_EQ(plan::getIntersectionVolume(squares[0], squares[1]), 4);
  SmallVector<plan::Region, 2> scalars = {{}, {}};
  EXPECT_EQ(plan::getUnionVolume(scalars, 0), 1);
}

// getUnionVolume against counting the cells of a small grid one by one, on
// random boxes that repeat, nest, touch and are empty (the sweep keeps the
// regions open at each cut and reuses a slab's union for the next).
TEST(PlanArithmeticTest, UnionVolumeCountsCells) {
  std::mt19937 rng(22);
  auto draw = [&](int n) { return int64_t(rng() % n); };
  for (unsigned trial = 0; trial != 400; ++trial) {
    unsigned rank = 1 + trial % 3, count = 1 + draw(12);
    std::vector<plan::Region> regions;
    for (unsigned r = 0; r != count; ++r) {
      if (!regions.empty() && draw(4) == 0) {
        regions.push_back(regions[draw(regions.size())]);
        continue;
      }
      plan::Region box(rank);
      for (auto &range : box) {
        int64_t a = draw(7), b = draw(7);
        range = {std::min(a, b), std::max(a, b)};
      }
      regions.push_back(box);
    }
    int64_t cells = 0;
    for (int64_t cell = 0, e = rank == 1 ? 6 : rank == 2 ? 36 : 216;
         cell != e; ++cell) {
      auto holds = [&](const plan::Region &box) {
        int64_t rest = cell;
        for (const auto &range : box) {
          int64_t at = rest % 6;
          rest /= 6;
          if (at < range.lo || at >= range.hi)
            return false;
        }
        return true;
      };
      cells += llvm::any_of(regions, holds);
    }
    EXPECT_EQ(plan::getUnionVolume(regions, rank), cells) << "trial " << trial;
  }
}

} // namespace
