//===- RegionsTest.cpp - Strategies and concrete regions ------------------===//

#include "AnalysisTestUtils.h"

using namespace tofu;
using namespace tofu::analysis;

namespace {

const char *const conv1dSource =
    "op conv1d(data, filters) = lambda b, co, x: "
    "Sum(lambda ci, dx: data[b, ci, x + dx] * filters[ci, co, dx]);";

TEST(StrategyDiscoveryTest, OneSplitPerOutputVarOneReducePerReductionVar) {
  AnalysedOp op(conv1dSource, "conv1d");
  ArrayRef<Strategy> s = op.analysis->getStrategies();
  ASSERT_EQ(s.size(), 5u);
  const char *names[] = {"b", "co", "x", "ci", "dx"};
  for (unsigned i = 0; i != 5; ++i) {
    EXPECT_EQ(op.analysis->getOp().getIndexVars()[s[i].var]->getName(), names[i]);
    EXPECT_EQ(s[i].kind, i < 3 ? Strategy::Kind::Split : Strategy::Kind::Reduce);
  }
  EXPECT_EQ(s[3].reducer, tdl::Reducer::Sum);
}

TEST(StrategyDiscoveryTest, NoReduceWherePartialsDoNotCombine) {
  AnalysedOp bias("op f(A, B, c) = lambda i, j: c[j] + Sum(lambda k: A[i, k] * "
                  "B[k, j]);",
                  "f");
  EXPECT_EQ(bias.analysis->getStrategies().size(), 2u);
  ASSERT_EQ(bias.analysis->getNotes().size(), 1u);
  EXPECT_NE(bias.analysis->getNotes()[0].message.find("no reduce strategy along 'k'"),
            std::string::npos);
  AnalysedOp scaled("op g(A) = lambda i: -Sum(lambda k: A[i, k]) / 4;", "g");
  EXPECT_EQ(scaled.analysis->getStrategies().size(), 2u);
  AnalysedOp shifted("op h(A) = lambda i: Max(lambda k: A[i, k]) - 1;", "h");
  EXPECT_EQ(shifted.analysis->getStrategies().size(), 2u);
  AnalysedOp mixed("op m(A) = lambda i: Sum(lambda j: Max(lambda k: A[i, j, k]));",
                   "m");
  // Splitting j is fine; splitting k would sum maxima of halves.
  EXPECT_EQ(mixed.analysis->getStrategies().size(), 2u);
}

TEST(RegionsTest, Conv1dMatchesTheContract) {
  AnalysedOp op(conv1dSource, "conv1d");
  Binding binding = op.bind({{4, 6, 20}, {6, 8, 3}}, {4, 8, 18});
  SmallVector<Range, 2> parts;
  splitEvenly(18, 2, parts);
  SmallVector<WorkerRegions, 2> workers;
  instantiateStrategy(binding, op.strategy("x"), parts, workers);
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].output, region({{0, 4}, {0, 8}, {0, 9}}));
  EXPECT_EQ(workers[0].inputs[0], region({{0, 4}, {0, 6}, {0, 11}}));
  EXPECT_EQ(workers[0].inputs[1], region({{0, 6}, {0, 8}, {0, 3}}));
  EXPECT_EQ(workers[1].output, region({{0, 4}, {0, 8}, {9, 18}}));
  EXPECT_EQ(workers[1].inputs[0], region({{0, 4}, {0, 6}, {9, 20}}));

  splitEvenly(6, 2, parts);
  instantiateStrategy(binding, op.strategy("ci"), parts, workers);
  EXPECT_TRUE(workers[1].partial);
  EXPECT_EQ(workers[1].output, region({{0, 4}, {0, 8}, {0, 18}}));
  EXPECT_EQ(workers[1].inputs[0], region({{0, 4}, {3, 6}, {0, 20}}));
  EXPECT_EQ(workers[1].inputs[1], region({{3, 6}, {0, 8}, {0, 3}}));
}

TEST(RegionsTest, NWayAndUnevenSplits) {
  AnalysedOp op(conv1dSource, "conv1d");
  Binding binding = op.bind({{4, 6, 20}, {6, 8, 3}}, {4, 8, 18});
  SmallVector<Range, 4> parts;
  splitEvenly(18, 4, parts);
  EXPECT_EQ(parts[0], (Range{0, 5}));
  EXPECT_EQ(parts[1], (Range{5, 10}));
  EXPECT_EQ(parts[3], (Range{14, 18}));
  splitBySizes({1, 0, 17}, parts);
  SmallVector<WorkerRegions, 4> workers;
  instantiateStrategy(binding, op.strategy("x"), parts, workers);
  ASSERT_EQ(workers.size(), 3u);
  EXPECT_EQ(workers[0].inputs[0][2], (Range{0, 3}));
  // An empty part reads nothing.
  EXPECT_EQ(workers[1].inputs[0], region({{0, 0}, {0, 0}, {0, 0}}));
  EXPECT_EQ(workers[2].inputs[0][2], (Range{1, 20}));
}

TEST(RegionsTest, ShiftTwoClipsToTheTensor) {
  AnalysedOp op("op shift_two(A) = lambda i: A[i + 2];", "shift_two");
  // An output larger than the inferred one reads past A: clipped.
  Binding binding = op.bind({{10}}, {10});
  SmallVector<Range, 2> parts;
  splitEvenly(10, 2, parts);
  SmallVector<WorkerRegions, 2> workers;
  instantiateStrategy(binding, op.strategy("i"), parts, workers);
  EXPECT_EQ(workers[0].inputs[0], region({{2, 7}}));
  EXPECT_EQ(workers[1].inputs[0], region({{7, 10}}));
}

TEST(RegionsTest, DataDependentAndProductIndicesReadTheWholeDimension) {
  AnalysedOp op("op f(W, idx) = lambda i, d: W[idx[i], d] + W[i * d, 0];", "f");
  ASSERT_EQ(op.analysis->getNotes().size(), 2u);
  EXPECT_NE(op.analysis->getNotes()[0].message.find("data dependent"),
            std::string::npos);
  EXPECT_NE(op.analysis->getNotes()[1].message.find("not affine"),
            std::string::npos);
  Binding binding = op.bind({{50, 8}, {6}}, {6, 4});
  SmallVector<Range, 2> parts;
  splitEvenly(6, 2, parts);
  SmallVector<WorkerRegions, 2> workers;
  instantiateStrategy(binding, op.strategy("i"), parts, workers);
  EXPECT_EQ(workers[0].inputs[0], region({{0, 50}, {0, 4}}));
  EXPECT_EQ(workers[0].inputs[1], region({{0, 3}}));
}

TEST(RegionsTest, ParamCoefficientsUseTheirSign) {
  AnalysedOp op("op f<a>(A) = lambda i: A[a * i + 10];", "f");
  Binding pos = op.bind({{40}}, {4}, {3});
  Binding neg = op.bind({{40}}, {4}, {-2});
  SmallVector<Range, 4> box;
  getFullBox(pos, box);
  WorkerRegions w;
  computeWorkerRegions(pos, box, w);
  EXPECT_EQ(w.inputs[0], region({{10, 20}}));
  computeWorkerRegions(neg, box, w);
  EXPECT_EQ(w.inputs[0], region({{4, 11}}));
}

TEST(RegionsTest, DivisionByNonPositiveParamReadsTheWholeDimension) {
  AnalysedOp op("op f<d>(A) = lambda i: A[i / d];", "f");
  Binding zero = op.bind({{7}}, {4}, {0});
  SmallVector<Range, 4> box;
  getFullBox(zero, box);
  WorkerRegions w;
  computeWorkerRegions(zero, box, w);
  EXPECT_EQ(w.inputs[0], region({{0, 7}}));
  Binding two = op.bind({{7}}, {4}, {2});
  computeWorkerRegions(two, box, w);
  EXPECT_EQ(w.inputs[0], region({{0, 2}}));
}

TEST(BindingTest, RejectsShapesThatDoNotFit) {
  AnalysedOp op("op mm(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);",
                "mm");
  auto bad = Binding::create(*op.analysis, {{4, 5}, {6, 3}}, {4, 3}, {});
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(toString(bad.takeError()),
            "operator 'mm': 'k' ranges over dimension 1 of 'A' (5) but also "
            "indexes dimension 0 of 'B' (6)");
  auto rank = Binding::create(*op.analysis, {{4, 5}, {5}}, {4, 3}, {});
  ASSERT_FALSE(bool(rank));
  EXPECT_EQ(toString(rank.takeError()),
            "operator 'mm': tensor 'B' has rank 2 but its shape 5 has rank 1");
  auto count = Binding::create(*op.analysis, {{4, 5}}, {4, 3}, {});
  EXPECT_FALSE(bool(count));
  llvm::consumeError(count.takeError());
}

} // namespace
