//===- ShapeInferenceTest.cpp - Output shapes from input shapes -----------===//

#include "AnalysisTestUtils.h"

#include "tofu/Analysis/ShapeInference.h"

using namespace tofu;
using namespace tofu::analysis;

namespace {

const char *const source = R"(
op shift_two(A) = lambda i: A[i + 2];
op conv1d(data, filters) =
    lambda b, co, x: Sum(lambda ci, dx: data[b, ci, x + dx] * filters[ci, co, dx]);
op conv2d<stride, pad>(data, w) =
    lambda n, co, y, x: Sum(lambda ci, ky, kx:
        data[n, ci, y * stride + ky - pad, x * stride + kx - pad] * w[co, ci, ky, kx]);
op avgpool2(X) = lambda n, c, y, x:
    Sum(lambda ky < 2, kx < 2: X[n, c, 2 * y + ky, 2 * x + kx]) / 4;
op embedding(W, idx) = lambda i, d: W[idx[i], d];
op flatten_chw(X) = lambda n, f: X[n, f / 64, (f / 8) % 8, f % 8];
op outer(A) = lambda i, j: A[i + j];
op fill(A) = lambda i: 1.0;
op keepdim_sum(x) = lambda z < 1, j: Sum(lambda k: x[k, j]);
op reshape<rows, cols>(x) = lambda i < rows, j < cols: x[i * cols + j];
)";

Shape infer(StringRef name, ArrayRef<Shape> inputs, ArrayRef<int64_t> params,
            std::string *error = nullptr) {
  tdl::ParsedSource parsed(source);
  EXPECT_TRUE(parsed.errors.empty());
  llvm::Expected<Shape> shape =
      inferOutputShape(parsed.op(name), inputs, params);
  if (shape)
    return *shape;
  std::string msg = toString(shape.takeError());
  if (error)
    *error = msg;
  else
    ADD_FAILURE() << msg;
  return {};
}

TEST(ShapeInferenceTest, LargestOutputWithReadsInBounds) {
  EXPECT_EQ(infer("shift_two", {{10}}, {}), Shape({8}));
  EXPECT_EQ(infer("conv1d", {{4, 6, 20}, {6, 8, 3}}, {}), Shape({4, 8, 18}));
  EXPECT_EQ(infer("avgpool2", {{2, 3, 9, 8}}, {}), Shape({2, 3, 4, 4}));
  EXPECT_EQ(infer("embedding", {{100, 16}, {7}}, {}), Shape({7, 16}));
  EXPECT_EQ(infer("flatten_chw", {{2, 4, 8, 8}}, {}), Shape({2, 256}));
}

TEST(ShapeInferenceTest, PaddingIsSymmetric) {
  // (H + 2 pad - K) / stride + 1, as PyTorch computes it.
  EXPECT_EQ(infer("conv2d", {{2, 3, 8, 8}, {4, 3, 3, 3}}, {1, 1}),
            Shape({2, 4, 8, 8}));
  EXPECT_EQ(infer("conv2d", {{2, 3, 8, 7}, {4, 3, 3, 3}}, {2, 1}),
            Shape({2, 4, 4, 4}));
  EXPECT_EQ(infer("conv2d", {{1, 3, 8, 8}, {4, 3, 3, 3}}, {2, 0}),
            Shape({1, 4, 3, 3}));
}

TEST(ShapeInferenceTest, ExplicitOutputExtentsDetermineTheirDimension) {
  EXPECT_EQ(infer("keepdim_sum", {{4, 6}}, {}), Shape({1, 6}));
  // Without the extents, `i * cols + j` would bound neither variable.
  EXPECT_EQ(infer("reshape", {{12}}, {3, 4}), Shape({3, 4}));
}

TEST(ShapeInferenceTest, BindingChecksAGivenShapeAgainstExplicitExtents) {
  tdl::ParsedSource parsed(source);
  auto analysis = OperatorAnalysis::analyze(parsed.op("reshape"));
  ASSERT_TRUE(bool(analysis));
  auto binding = Binding::create(*analysis, {{12}}, {3, 4});
  ASSERT_TRUE(bool(binding));
  // Known before the output shape is bound.
  EXPECT_EQ(binding->getVarExtent(0), 3);
  EXPECT_EQ(binding->getVarExtent(1), 4);
  llvm::Error err = binding->setOutputShape({3, 5});
  EXPECT_EQ(toString(std::move(err)),
            "operator 'reshape': output dimension 1 ('j') has the explicit "
            "extent 4 but the output shape 3x5 gives it 5");
  EXPECT_FALSE(bool(binding->setOutputShape({3, 4})));
}

TEST(ShapeInferenceTest, SaysWhenTheReadsDoNotDetermineTheShape) {
  std::string error;
  infer("outer", {{5}}, {}, &error);
  EXPECT_EQ(error, "operator 'outer': the reads do not determine output "
                   "dimension 0 ('i'): no tensor index bounds it; give the "
                   "output shape explicitly");
  infer("fill", {{5}}, {}, &error);
  EXPECT_NE(error.find("output dimension 0 ('i')"), std::string::npos);
  infer("conv1d", {{4, 6, 2}, {6, 8, 3}}, {}, &error);
  EXPECT_EQ(error, "operator 'conv1d': no extent of output dimension 2 ('x') "
                   "keeps index 2 of 'data' (x + dx) within its extent 2");
  infer("conv1d", {{4, 6, 20}}, {}, &error);
  EXPECT_EQ(error, "operator 'conv1d': expects 2 input tensors, got 1");
}

TEST(ShapeInferenceTest, UndeterminedDimensionsHaveTheirOwnErrorType) {
  tdl::ParsedSource parsed(source);
  auto isUndetermined = [&](StringRef name, ArrayRef<Shape> inputs) {
    llvm::Expected<Shape> shape = inferOutputShape(parsed.op(name), inputs, {});
    if (shape)
      return false;
    bool undetermined = false;
    llvm::handleAllErrors(
        shape.takeError(),
        [&](const UndeterminedShapeError &) { undetermined = true; },
        [](const llvm::ErrorInfoBase &) {});
    return undetermined;
  };
  EXPECT_TRUE(isUndetermined("outer", {{5}}));
  EXPECT_TRUE(isUndetermined("fill", {{5}}));
  // Reads out of bounds at every extent, or a wrong input count: other errors.
  EXPECT_FALSE(isUndetermined("conv1d", {{4, 6, 2}, {6, 8, 3}}));
  EXPECT_FALSE(isUndetermined("conv1d", {{4, 6, 20}}));
}

} // namespace
