//===- SymbolicRegionsTest.cpp - Regions as functions of the extents ------===//

#include "AnalysisTestUtils.h"

#include "tofu/Analysis/SymbolicRegions.h"

#include "llvm/Support/raw_ostream.h"

using namespace tofu;
using namespace tofu::analysis;

namespace {

std::string str(const OperatorAnalysis &a, const SymRange &r) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << (r.exact ? "[" : "~[");
  printPoly(os, a, r.lo);
  os << ", ";
  printPoly(os, a, r.hi);
  os << ')';
  return os.str();
}

/// The symbolic range of dimension `dim` of input `tensor` (its first
/// region) for worker `w` of `strategy` split in halves.
std::string inputRange(AnalysedOp &op, StringRef var, unsigned w,
                       unsigned tensor, unsigned dim) {
  SmallVector<SymbolicWorker, 2> workers;
  computeSymbolicStrategy(*op.analysis, op.strategy(var), 2, workers);
  return str(*op.analysis, workers[w].inputs[tensor][0][dim]);
}

TEST(SymbolicRegionsTest, Conv1dHalo) {
  AnalysedOp op("op conv1d(data, filters) = lambda b, co, x: Sum(lambda ci, "
                "dx: data[b, ci, x + dx] * filters[ci, co, dx]);",
                "conv1d");
  EXPECT_EQ(inputRange(op, "x", 0, 0, 2), "[0, |x|/2 + |dx| - 1)");
  EXPECT_EQ(inputRange(op, "x", 1, 0, 2), "[|x|/2, |x| + |dx| - 1)");
  EXPECT_EQ(inputRange(op, "ci", 1, 1, 0), "[|ci|/2, |ci|)");
}

TEST(SymbolicRegionsTest, ParamsAreCoefficients) {
  AnalysedOp op("op f<s, p>(A) = lambda y: Sum(lambda k < s + 1: A[y * s + k - p]);",
                "f");
  EXPECT_EQ(inputRange(op, "y", 0, 0, 0), "[-p, s*|y|/2 - p + 1)");
  EXPECT_EQ(inputRange(op, "k", 1, 0, 0), "[s/2 - p + 1/2, s*|y| - p + 1)");
}

TEST(SymbolicRegionsTest, UnknownSignAndDivModDegradeVisibly) {
  AnalysedOp op("op f<a>(A, B) = lambda i: A[(1 - a) * i] + B[i / 4, i % 3];",
                "f");
  // The sign of 1 - a depends on a: the whole dimension of A.
  EXPECT_EQ(inputRange(op, "i", 0, 0, 0), "[0, |A.0|)");
  EXPECT_EQ(inputRange(op, "i", 1, 1, 0), "~[|i|/8, |i|/4 + 3/4)");
  EXPECT_EQ(inputRange(op, "i", 1, 1, 1), "~[0, 3)");
}

TEST(OrderParamsTest, OrdersByPositionAndReportsMistakes) {
  AnalysedOp op("op f<s, p>(A) = lambda y: A[y * s - p];", "f");
  const tdl::OpDecl &decl = op.analysis->getOp();
  auto values = orderParams(decl, {{"p", 1}, {"s", 2}});
  ASSERT_TRUE(bool(values));
  EXPECT_EQ(*values, (SmallVector<int64_t, 4>{2, 1}));
  auto missing = orderParams(decl, {{"s", 2}});
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(toString(missing.takeError()), "operator 'f': no value for param 'p'");
  auto unknown = orderParams(decl, {{"s", 2}, {"q", 0}});
  ASSERT_FALSE(bool(unknown));
  EXPECT_EQ(toString(unknown.takeError()), "operator 'f': has no param 'q'");
}

} // namespace
