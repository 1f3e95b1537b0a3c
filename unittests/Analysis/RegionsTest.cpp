//===- RegionsTest.cpp - Strategies and concrete regions ------------------===//

#include "AnalysisTestUtils.h"

#include "tofu/Analysis/ShapeInference.h"

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

TEST(RegionsTest, StridedReadsClippedAtAnEdgeEndAtTheLastElementRead) {
  // Stride 2, pad 1 over 9 rows: 5 output rows. Reducing over ky, the worker
  // with ky = 2 reads rows 2y + 1 = 1, 3, 5, 7 (9 is padding): [1, 8), not
  // the clipped interval [1, 9).
  AnalysedOp op("op conv<s, p>(X) = lambda y: Sum(lambda ky < 3: "
                "X[s * y + ky - p]);",
                "conv");
  Binding binding = op.bind({{9}}, {5}, {2, 1});
  SmallVector<Range, 2> parts;
  splitBySizes({2, 1}, parts);
  SmallVector<WorkerRegions, 2> workers;
  instantiateStrategy(binding, op.strategy("ky"), parts, workers);
  EXPECT_EQ(workers[0].inputs[0], region({{0, 9}}));
  EXPECT_EQ(workers[1].inputs[0], region({{1, 8}}));
  // Clipped below: with ky = 0 the reads are 2y - 1 = -1 (padding), 1, ...,
  // 7: the first element read is 1, not 0.
  splitBySizes({1, 2}, parts);
  instantiateStrategy(binding, op.strategy("ky"), parts, workers);
  EXPECT_EQ(workers[0].inputs[0], region({{1, 8}}));
  EXPECT_EQ(workers[1].inputs[0], region({{0, 9}}));
  // A negative stride, clipped at both ends: 12 - 3y over y in [0, 5) reads
  // 12 (padding), 9, 6, 3, 0 of 11 elements.
  AnalysedOp flip("op flip(X) = lambda y: X[12 - 3 * y];", "flip");
  Binding fb = flip.bind({{11}}, {5});
  SmallVector<Range, 4> box;
  getFullBox(fb, box);
  WorkerRegions w;
  computeWorkerRegions(fb, box, w);
  EXPECT_EQ(w.inputs[0], region({{0, 10}}));
  // Every strided read in the padding: nothing is read.
  box[0] = Range{0, 1};
  computeWorkerRegions(fb, box, w);
  EXPECT_EQ(w.inputs[0], region({{0, 0}}));
}

TEST(RegionsTest, ModuloThatWrapsIsClippedToWhatItReads) {
  // (2 - i) % 5 over i in [2, 4) takes 0 and 4; A has 2 elements, so only 0
  // is read, not the hull [0, 5) clipped to [0, 2).
  AnalysedOp op("op f(A) = lambda i: A[(2 - i) % 5];", "f");
  Binding binding = op.bind({{2}}, {4});
  SmallVector<Range, 4> box;
  getFullBox(binding, box);
  box[0] = Range{2, 4};
  WorkerRegions w;
  computeWorkerRegions(binding, box, w);
  EXPECT_EQ(w.inputs[0], region({{0, 1}}));
  // Over [1, 4) it takes 1, 0, 4: [0, 2).
  box[0] = Range{1, 4};
  computeWorkerRegions(binding, box, w);
  EXPECT_EQ(w.inputs[0], region({{0, 2}}));
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

TEST(BindingTest, RejectsShapesAtWhichIndexArithmeticOverflows) {
  AnalysedOp op("op big(x) = lambda i: x[i * 3000000000];", "big");
  // 3e9 * (2^32 - 1) overflows int64_t: refused before any region is made.
  auto bad = Binding::create(*op.analysis, {{10}}, {int64_t(1) << 32}, {});
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(toString(bad.takeError()),
            "operator 'big': index 0 of 'x' (i * 3000000000) overflows 64-bit "
            "arithmetic with these shapes and params (a bound beyond 2^62)");
  auto fine = Binding::create(*op.analysis, {{10}}, {1000}, {});
  EXPECT_TRUE(bool(fine));
  llvm::consumeError(fine.takeError());
  // Shape inference searches extents up to 2^40 with checked arithmetic.
  auto shape = inferOutputShape(*op.analysis, {{10}}, {});
  ASSERT_TRUE(bool(shape)) << toString(shape.takeError());
  EXPECT_EQ(*shape, Shape({1}));
  // A product of params evaluated with checked arithmetic.
  AnalysedOp param("op p<s>(x) = lambda i: x[i * s * s * s * s];", "p");
  auto coef = Binding::create(*param.analysis, {{10}}, {2}, {1 << 20});
  ASSERT_FALSE(bool(coef));
  EXPECT_EQ(toString(coef.takeError()),
            "operator 'p': a coefficient of an index overflows 64-bit "
            "arithmetic with these params");
}

} // namespace
