//===- SemaTest.cpp - Resolution, extents and index kinds -----------------===//

#include "TDLTestUtils.h"

#include "tofu/TDL/ExprWalk.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

TEST(SemaTest, Conv1dVariablesAndExtents) {
  ParsedSource src("op conv1d(data, filters) = lambda b, co, x:\n"
                   "  Sum(lambda ci, dx: data[b, ci, x + dx] * "
                   "filters[ci, co, dx]);");
  ASSERT_TRUE(src.errors.empty());
  const OpDecl &op = src.op("conv1d");
  ASSERT_EQ(op.getIndexVars().size(), 5u);
  EXPECT_EQ(op.getReductionVars().size(), 2u);
  const IndexVarDecl *ci = op.getIndexVars()[3];
  const IndexVarDecl *dx = op.getIndexVars()[4];
  EXPECT_EQ(ci->getName(), "ci");
  EXPECT_EQ(ci->getId(), 3u);
  EXPECT_EQ(ci->getExtent().kind, Extent::Kind::TensorDim);
  // The first tensor dimension `ci` indexes alone: data[b, ci, ...].
  EXPECT_EQ(ci->getExtent().tensor->getName(), "data");
  EXPECT_EQ(ci->getExtent().dim, 1u);
  EXPECT_EQ(dx->getExtent().dim, 2u);
  EXPECT_EQ(op.getIndexVars()[2]->getExtent().kind, Extent::Kind::OutputDim);
  EXPECT_EQ(op.getTensors()[0]->getRank(), 3);
  EXPECT_EQ(op.getBody().getType(), ValueType::Real);
}

TEST(SemaTest, ClassifiesIndices) {
  ParsedSource src(
      "op f<s>(A, I) = lambda i, j: A[i * s + 1, j / 2, I[i], i * j];");
  ASSERT_TRUE(src.errors.empty());
  auto reads = collectTensorReads(src.op("f"));
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0]->getIndexKind(0), IndexKind::Affine);
  EXPECT_EQ(reads[0]->getIndexKind(1), IndexKind::DivMod);
  EXPECT_EQ(reads[0]->getIndexKind(2), IndexKind::DataDependent);
  EXPECT_EQ(reads[0]->getIndexKind(3), IndexKind::Opaque);
  EXPECT_EQ(reads[1]->getTensorName(), "I");
}

TEST(SemaTest, ResolvesNamesToDeclarations) {
  ParsedSource src("op f<p>(A) = lambda i: Sum(lambda k < p: A[i + k]);");
  ASSERT_TRUE(src.errors.empty());
  const auto &red = cast<ReduceExpr>(src.op("f").getBody());
  const auto &read = cast<TensorReadExpr>(red.getBody());
  const auto &sum = cast<BinaryExpr>(read.getIndex(0));
  EXPECT_EQ(cast<NameExpr>(sum.getLHS()).getIndexVar(),
            src.op("f").getIndexVars()[0]);
  EXPECT_EQ(cast<NameExpr>(sum.getRHS()).getIndexVar()->getReduction(), &red);
  const Expr *extent = red.getVars()[0]->getExtentExpr();
  EXPECT_EQ(cast<NameExpr>(extent)->getParam(),
            src.op("f").getParams()[0].get());
}

TEST(SemaTest, ReportsErrorsAtTheirLocations) {
  ParsedSource src("op f(A) = lambda i:\n"
                   "  A[i] + A[i, 0] + B[i] + Sum(lambda k: k);");
  ASSERT_EQ(src.errors.size(), 3u);
  EXPECT_EQ(src.errors[0], "2:10: wrong number of indices for tensor 'A': 2 "
                           "here, but 1 elsewhere");
  EXPECT_EQ(src.errors[1], "2:20: unknown tensor 'B'");
  EXPECT_EQ(src.errors[2].substr(0, 50),
            "2:41: cannot infer the extent of reduction variabl");
}

} // namespace
