//===- EvaluatorTest.cpp - Unit tests of the TDL evaluator ----------------===//
//
// Each test evaluates a small operator on hand-made tensors and compares
// every element with a value computed by hand.
//
//===----------------------------------------------------------------------===//

#include "TDL/TDLTestUtils.h"

#include "tofu/Eval/Evaluator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace tofu;
using namespace tofu::eval;

namespace {

/// A tensor of `shape` holding `values` in row-major order.
Tensor makeTensor(ArrayRef<int64_t> shape, ArrayRef<double> values,
                  DType dtype = DType::F64) {
  Tensor t(dtype, shape);
  EXPECT_EQ(size_t(t.getNumElements()), values.size());
  std::copy(values.begin(), values.end(), t.getData().begin());
  return t;
}

/// Parses `source`, evaluates operator `name` and returns its output.
Tensor run(StringRef source, StringRef name, ArrayRef<const Tensor *> inputs,
           ArrayRef<int64_t> outShape, ArrayRef<double> params = {}) {
  tdl::ParsedSource parsed(source);
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  llvm::Expected<Tensor> out =
      evaluate(parsed.op(name), inputs, params, outShape, DType::F64);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return Tensor();
  }
  return std::move(*out);
}

std::string runError(StringRef source, StringRef name,
                     ArrayRef<const Tensor *> inputs,
                     ArrayRef<int64_t> outShape, ArrayRef<double> params = {}) {
  tdl::ParsedSource parsed(source);
  llvm::Expected<Tensor> out =
      evaluate(parsed.op(name), inputs, params, outShape, DType::F64);
  if (out)
    return "";
  return llvm::toString(out.takeError());
}

void expectValues(const Tensor &t, ArrayRef<double> expected) {
  ASSERT_EQ(size_t(t.getNumElements()), expected.size());
  for (size_t i = 0; i != expected.size(); ++i)
    EXPECT_DOUBLE_EQ(t.getData()[i], expected[i]) << "element " << i;
}

TEST(EvaluatorTest, Matmul) {
  Tensor a = makeTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = makeTensor({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor c = run("op matmul(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);",
                 "matmul", {&a, &b}, {2, 2});
  expectValues(c, {58, 64, 139, 154});
}

TEST(EvaluatorTest, PaddedStridedConv) {
  // One 3x3 image, one 2x2 filter of ones, stride 2, padding 1: each output
  // sums the window that starts at (2y - 1, 2x - 1), zeros outside.
  Tensor x = makeTensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = makeTensor({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor y = run(R"(op conv2d<stride, pad>(data, w) =
      lambda n, co, y, x: Sum(lambda ci, ky, kx:
        data[n, ci, y * stride + ky - pad, x * stride + kx - pad] * w[co, ci, ky, kx]);)",
                 "conv2d", {&x, &w}, {1, 1, 2, 2}, {2, 1});
  expectValues(y, {1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9});
}

TEST(EvaluatorTest, HaloReadsPastTheEndAreZero) {
  Tensor a = makeTensor({4}, {1, 2, 3, 4});
  Tensor out = run("op shift_two(A) = lambda i: A[i + 2];", "shift_two", {&a},
                   {4});
  expectValues(out, {3, 4, 0, 0});
  Tensor halo = run("op blur(A) = lambda i: A[i - 1] + A[i] + A[i + 1];",
                    "blur", {&a}, {4});
  expectValues(halo, {3, 6, 9, 7});
  // In bounds for every i (no checks compiled) and, with a longer output,
  // not: the same read then needs its bounds checks.
  StringRef flip = "op flip(A) = lambda i: A[3 - i];";
  expectValues(run(flip, "flip", {&a}, {4}), {4, 3, 2, 1});
  expectValues(run(flip, "flip", {&a}, {5}), {4, 3, 2, 1, 0});
}

TEST(EvaluatorTest, Reducers) {
  Tensor x = makeTensor({2, 3}, {3, -1, 2, -5, 4, 0.5});
  StringRef source = R"(
    op rmax(X) = lambda i: Max(lambda k: X[i, k]);
    op rmin(X) = lambda i: Min(lambda k: X[i, k]);
    op rprod(X) = lambda i: Prod(lambda k: X[i, k]);
    op avgpool(X) = lambda i: Sum(lambda k < 2: X[i, 2 * k]) / 2;)";
  expectValues(run(source, "rmax", {&x}, {2}), {3, 4});
  expectValues(run(source, "rmin", {&x}, {2}), {-1, -5});
  expectValues(run(source, "rprod", {&x}, {2}), {-6, -10});
  expectValues(run(source, "avgpool", {&x}, {2}), {2.5, -2.25});
}

TEST(EvaluatorTest, EmptyRangesGiveTheIdentity) {
  Tensor x = makeTensor({1}, {7});
  StringRef source = R"(
    op esum<n>(X) = lambda i: Sum(lambda k < n: X[k]);
    op emax<n>(X) = lambda i: Max(lambda k < n: X[k]);
    op emin<n>(X) = lambda i: Min(lambda k < n: X[k]);
    op eprod<n>(X) = lambda i: Prod(lambda k < n: X[k]);)";
  const double inf = std::numeric_limits<double>::infinity();
  expectValues(run(source, "esum", {&x}, {1}, {0}), {0});
  expectValues(run(source, "emax", {&x}, {1}, {0}), {-inf});
  expectValues(run(source, "emin", {&x}, {1}, {0}), {inf});
  expectValues(run(source, "eprod", {&x}, {1}, {0}), {1});
  // A range over an empty tensor dimension is empty too.
  Tensor empty(DType::F64, {2, 0});
  expectValues(run("op s(X) = lambda i: Max(lambda k: X[i, k]);", "s",
                   {&empty}, {2}),
               {-inf, -inf});
}

TEST(EvaluatorTest, NestedReductions) {
  // Softmax over rows: each reduction runs inside the output loop.
  Tensor x = makeTensor({1, 2}, {0, std::log(3.0)});
  Tensor out = run(R"(op softmax(X) = lambda i, j:
      exp(X[i, j] - Max(lambda k: X[i, k])) /
      Sum(lambda m: exp(X[i, m] - Max(lambda q: X[i, q]))); )",
                   "softmax", {&x}, {1, 2});
  expectValues(out, {0.25, 0.75});
}

TEST(EvaluatorTest, ReductionsCachedOnTheirFreeVariables) {
  // The per-channel mean depends on c only; the inner Max of `nested`
  // depends on the outer reduction's k, so its cache must miss as k moves.
  Tensor x = makeTensor({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  StringRef source = R"(
    op center(X) = lambda n, c, w: X[n, c, w] - Sum(lambda m, v: X[m, c, v]) / 4;
    op nested(X) = lambda n: Sum(lambda k: Max(lambda j: X[n, k, j]) * k);
    op konst(X) = lambda n, c, w: Sum(lambda a, b, d: X[a, b, d]);)";
  // Channel 0 holds 1 2 5 6 (mean 3.5), channel 1 holds 3 4 7 8 (5.5).
  expectValues(run(source, "center", {&x}, {2, 2, 2}),
               {-2.5, -1.5, -2.5, -1.5, 1.5, 2.5, 1.5, 2.5});
  expectValues(run(source, "nested", {&x}, {2}), {4, 8});
  expectValues(run(source, "konst", {&x}, {2, 2, 2}),
               {36, 36, 36, 36, 36, 36, 36, 36});
}

TEST(EvaluatorTest, DataDependentGather) {
  Tensor w = makeTensor({3, 2}, {10, 11, 20, 21, 30, 31});
  // Indices are truncated toward zero; out-of-range ones read 0.
  Tensor idx = makeTensor({5}, {2, 0, 1.9, -1, 3}, DType::I64);
  Tensor out = run("op embedding(W, idx) = lambda i, d: W[idx[i], d];",
                   "embedding", {&w, &idx}, {5, 2});
  expectValues(out, {30, 31, 10, 11, 20, 21, 0, 0, 0, 0});
}

TEST(EvaluatorTest, IntegerDivisionFloorsAndRemainderTakesDivisorSign) {
  Tensor x = makeTensor({6}, {0, 1, 2, 3, 4, 5});
  StringRef source = R"(
    op q(X) = lambda i: (i - 3) / 2 + 0 * X[i];
    op r(X) = lambda i: (i - 3) % 2 + 0 * X[i];
    op rn(X) = lambda i: (i - 3) % (0 - 2) + 0 * X[i];
    op fl(X) = lambda n, f: X[f / 2 * 2 + f % 2];)";
  expectValues(run(source, "q", {&x}, {6}), {-2, -1, -1, 0, 0, 1});
  expectValues(run(source, "r", {&x}, {6}), {1, 0, 1, 0, 1, 0});
  expectValues(run(source, "rn", {&x}, {6}), {-1, 0, -1, 0, -1, 0});
  expectValues(run(source, "fl", {&x}, {1, 6}), {0, 1, 2, 3, 4, 5});
}

TEST(EvaluatorTest, ComparisonsSelectAndBuiltins) {
  Tensor x = makeTensor({4}, {-2, -0.5, 0, 3});
  StringRef source = R"(
    op relu(X) = lambda i: max(X[i], 0.0);
    op mask(X) = lambda i: X[i] > 0 || X[i] == 0 - 2;
    op both(X) = lambda i: !(X[i] < 0) && i >= 1;
    op sel(X) = lambda i: select(X[i] < 0, 0 - X[i], X[i] * 2);
    op misc(X) = lambda i: abs(X[i]) + pow(X[i], 2) + sqrt(abs(X[i]));
    op act(X) = lambda i: tanh(X[i]) + sigmoid(X[i]) + exp(X[i]);)";
  expectValues(run(source, "relu", {&x}, {4}), {0, 0, 0, 3});
  expectValues(run(source, "mask", {&x}, {4}), {1, 0, 0, 1});
  expectValues(run(source, "both", {&x}, {4}), {0, 0, 1, 1});
  expectValues(run(source, "sel", {&x}, {4}), {2, 0.5, 0, 6});
  expectValues(run(source, "misc", {&x}, {4}),
               {2 + 4 + std::sqrt(2.0), 0.5 + 0.25 + std::sqrt(0.5), 0,
                3 + 9 + std::sqrt(3.0)});
  Tensor act = run(source, "act", {&x}, {4});
  for (int i = 0; i != 4; ++i) {
    double v = x.getData()[i];
    EXPECT_NEAR(act.getData()[i],
                std::tanh(v) + 1 / (1 + std::exp(-v)) + std::exp(v), 1e-12);
  }
}

TEST(EvaluatorTest, RoundingAndTranscendentalBuiltins) {
  Tensor x = makeTensor({3}, {-1.5, 0, 0.25});
  StringRef source = R"(
    op rounding(X) = lambda i: floor(X[i]) * 100 + ceil(X[i]) * 10 + sign(X[i]);
    op trans(X) = lambda i: erf(X[i]) + sin(X[i]) + cos(X[i]) + log1p(abs(X[i])) + expm1(X[i]);)";
  expectValues(run(source, "rounding", {&x}, {3}), {-200 - 10 - 1, 0, 10 + 1});
  Tensor t = run(source, "trans", {&x}, {3});
  for (int i = 0; i != 3; ++i) {
    double v = x.getData()[i];
    EXPECT_NEAR(t.getData()[i],
                std::erf(v) + std::sin(v) + std::cos(v) +
                    std::log1p(std::fabs(v)) + std::expm1(v),
                1e-12);
  }
}

TEST(EvaluatorTest, RealParams) {
  Tensor x = makeTensor({2}, {1, 2});
  expectValues(run("op leaky<slope: real, n: int>(X) = lambda i: "
                   "X[i] * slope + n / 2;",
                   "leaky", {&x}, {2}, {0.5, 3}),
               {0.5 + 1, 1 + 1});
}

TEST(EvaluatorTest, OpaqueOperatorsAreRefused) {
  Tensor x = makeTensor({2}, {1, 2});
  EXPECT_EQ(runError("op noise<p: real>(X) = lambda i: opaque(X[i]);",
                     "noise", {&x}, {2}, {0.5}),
            "operator 'noise' is opaque: its value cannot be computed by TDL");
}

TEST(EvaluatorTest, ParamsAsStridesExtentsAndValues) {
  Tensor x = makeTensor({6}, {1, 2, 3, 4, 5, 6});
  StringRef source = R"(
    op window<size, step>(X) = lambda i: Sum(lambda k < size: X[i * step + k]);
    op scale<s>(X) = lambda i: X[i] * s + s / 2;)";
  expectValues(run(source, "window", {&x}, {3}, {3, 2}),
               {1 + 2 + 3, 3 + 4 + 5, 5 + 6});
  // An int param is an integer in arithmetic: s / 2 floors.
  expectValues(run(source, "scale", {&x}, {2}, {3}), {3 + 1, 6 + 1});
}

TEST(EvaluatorTest, CompiledOpRunsManyTimes) {
  tdl::ParsedSource parsed("op twice(A) = lambda i: 2 * A[i];");
  Shape shape{3};
  auto compiled = CompiledOp::compile(parsed.op("twice"), {shape}, {}, shape);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_TRUE(compiled->hasRealBody());
  for (double base : {1.0, 10.0}) {
    Tensor a = makeTensor({3}, {base, base + 1, base + 2});
    Tensor out(DType::F64, shape);
    compiled->run({&a}, out);
    expectValues(out, {2 * base, 2 * base + 2, 2 * base + 4});
  }
}

TEST(EvaluatorTest, Errors) {
  Tensor a = makeTensor({2, 2}, {1, 2, 3, 4});
  StringRef source = "op f<p>(A) = lambda i: A[i, p];";
  EXPECT_EQ(runError(source, "f", {}, {2}, {0}),
            "operator 'f': expects 1 input tensors, got 0");
  EXPECT_EQ(runError(source, "f", {&a}, {2}, {}),
            "operator 'f': expects 1 param values, got 0");
  EXPECT_EQ(runError(source, "f", {&a}, {2, 2}, {0}),
            "operator 'f': the output has rank 1 but the output shape given "
            "is 2x2");
  Tensor v = makeTensor({2}, {1, 2});
  EXPECT_EQ(runError(source, "f", {&v}, {2}, {0}),
            "operator 'f': tensor 'A' has rank 2 but the input given has "
            "shape 2");
  EXPECT_EQ(runError(source, "f", {&a}, {2}, {0.5}),
            "operator 'f': int param 'p' was given the non-integral value "
            "0.500000");
}

} // namespace
