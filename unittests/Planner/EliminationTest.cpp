//===- EliminationTest.cpp - The elimination DP against brute force -------===//
//
// Random factor graphs small enough to enumerate: the elimination's
// optimum must equal the brute-force minimum, and conditioning (when the
// table limit is tiny) must still return a complete, consistent choice.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Elimination.h"
#include "tofu/Plan/Plan.h"

#include "gtest/gtest.h"

#include <random>

using namespace tofu;
using namespace tofu::planner;

namespace {

FactorGraph makeRandomGraph(std::mt19937 &rng, unsigned numVars,
                            unsigned numTables) {
  FactorGraph g;
  std::uniform_int_distribution<unsigned> domain(1, 4);
  for (unsigned v = 0; v != numVars; ++v)
    g.addVariable(domain(rng));
  std::uniform_int_distribution<unsigned> pick(0, numVars - 1);
  std::uniform_real_distribution<double> cost(0, 100);
  for (unsigned i = 0; i != numTables; ++i) {
    unsigned a = pick(rng), b = pick(rng);
    if (a == b) {
      std::vector<double> unary(g.getDomain(a));
      for (double &c : unary)
        c = cost(rng);
      g.addUnary(a, unary);
      continue;
    }
    std::vector<double> table(g.getDomain(a) * g.getDomain(b));
    for (double &c : table)
      c = std::floor(cost(rng));
    g.addPairwise(a, b, table);
  }
  return g;
}

double bruteForce(const FactorGraph &g) {
  unsigned n = g.getNumVariables();
  std::vector<unsigned> choice(n, 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    best = std::min(best, g.evaluate(choice));
    unsigned k = 0;
    while (k != n && ++choice[k] == g.getDomain(k))
      choice[k++] = 0;
    if (k == n)
      return best;
  }
}

TEST(EliminationTest, MatchesBruteForceOnRandomGraphs) {
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial != 200; ++trial) {
    FactorGraph g = makeRandomGraph(rng, 2 + trial % 8, 3 + trial % 17);
    double expected = bruteForce(g);
    std::vector<unsigned> choice;
    double cost = 0;
    ASSERT_TRUE(g.minimize(choice, cost));
    EXPECT_DOUBLE_EQ(cost, expected) << "trial " << trial;
    EXPECT_DOUBLE_EQ(g.evaluate(choice), cost);
    EXPECT_EQ(g.getStats().conditioned, 0u);
  }
}

TEST(EliminationTest, FailsOrConditionsBeyondTheTableLimit) {
  // A clique of 6 decisions of 4 choices needs a 4^5 table.
  std::mt19937 rng(3);
  auto makeClique = [&] {
    FactorGraph g;
    for (unsigned v = 0; v != 6; ++v)
      g.addVariable(4);
    std::uniform_real_distribution<double> cost(0, 10);
    for (unsigned a = 0; a != 6; ++a)
      for (unsigned b = a + 1; b != 6; ++b) {
        std::vector<double> table(16);
        for (double &c : table)
          c = cost(rng);
        g.addPairwise(a, b, table);
      }
    return g;
  };
  FactorGraph strict = makeClique();
  std::vector<unsigned> choice;
  double cost = 0;
  EXPECT_FALSE(strict.minimize(choice, cost, 64, /*allowConditioning=*/false));
  EXPECT_TRUE(choice.empty());

  FactorGraph relaxed = makeClique();
  double optimum = bruteForce(relaxed);
  ASSERT_TRUE(relaxed.minimize(choice, cost, 64, /*allowConditioning=*/true));
  EXPECT_GT(relaxed.getStats().conditioned, 0u);
  ASSERT_EQ(choice.size(), 6u);
  EXPECT_DOUBLE_EQ(relaxed.evaluate(choice), cost);
  EXPECT_GE(cost, optimum);
}

TEST(PlanArithmeticTest, PartsAndVolumes) {
  EXPECT_EQ(plan::getPart({0, 5}, 2, 0), (analysis::Range{0, 3}));
  EXPECT_EQ(plan::getPart({0, 5}, 2, 1), (analysis::Range{3, 5}));
  EXPECT_EQ(plan::getPart({0, 1}, 2, 1), (analysis::Range{1, 1}));
  EXPECT_EQ(plan::getPart({10, 17}, 3, 2), (analysis::Range{15, 17}));
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

} // namespace
