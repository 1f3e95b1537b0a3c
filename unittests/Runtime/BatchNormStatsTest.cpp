//===- BatchNormStatsTest.cpp - A batch norm's inverse deviation loop -----===//
//
// Checks runBatchNormInvStd (runtime/BatchNormStats.h) against the literal
// definition of specs/norm.tdl's native_batch_norm__2 on rank 4, written as
// the generated kernel evaluates it (three double sums in (n, h, w) order,
// then 1 / sqrt): equal bit for bit over every channel and over a box of
// channels held in a box of the input that starts at a later channel; and
// that a call whose reduction variables are split, or not f32, or whose
// input box lacks part of (N, H, W), is declined without writing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/BatchNormStats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tofu::runtime;

namespace {

constexpr std::int64_t N = 3, C = 5, H = 4, W = 7;

BatchNormInvStd description() {
  BatchNormInvStd b;
  std::int64_t shape[4] = {N, C, H, W};
  std::memcpy(b.shape, shape, sizeof(shape));
  b.epsilon = 1e-5;
  // The kernel's variables: c, then (n2, y2, x2), (n3, y3, x3), (n4, y4, x4).
  for (int i = 0; i != 3; ++i)
    b.varExtents.insert(b.varExtents.end(), {N, H, W});
  return b;
}

/// Values with a large mean in some channels (so the two terms cancel).
std::vector<float> data() {
  std::mt19937 rng(3);
  std::vector<float> x(N * C * H * W);
  for (std::size_t i = 0; i != x.size(); ++i) {
    std::int64_t c = std::int64_t(i) / (H * W) % C;
    x[i] = float(rng() % 100000) / 997.0f + (c % 2 ? 1000.0f : 0.0f);
  }
  return x;
}

/// The definition as the generated kernel computes it.
float reference(const std::vector<float> &x, std::int64_t c, double eps) {
  auto at = [&](std::int64_t n, std::int64_t h, std::int64_t w) {
    return double(x[((n * C + c) * H + h) * W + w]);
  };
  double r0 = 0, r1 = 0, r2 = 0;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t w = 0; w < W; ++w)
        r0 += at(n, h, w) * at(n, h, w);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t w = 0; w < W; ++w)
        r1 += at(n, h, w);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t w = 0; w < W; ++w)
        r2 += at(n, h, w);
  const double M = double(N * H * W);
  return float(1.0 / std::sqrt(r0 / M - r1 * r2 / double(N * H * W * (N * H * W)) + eps));
}

struct Call {
  std::vector<float> in;
  std::int64_t inLo[4], inExtent[4];
  std::vector<float> out;
  std::int64_t outLo[1], outExtent[1];
  std::vector<std::int64_t> varLo, varHi;
  BoxView input, output;
  KernelCall call;

  /// Channels [c0, c1) computed; the input box holds channels [i0, i1)
  /// (whole N, H, W), the output box exactly [c0, c1).
  Call(const std::vector<float> &x, std::int64_t c0, std::int64_t c1,
       std::int64_t i0, std::int64_t i1) {
    std::int64_t lo[4] = {0, i0, 0, 0}, ext[4] = {N, i1 - i0, H, W};
    std::memcpy(inLo, lo, sizeof(lo));
    std::memcpy(inExtent, ext, sizeof(ext));
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t c = i0; c < i1; ++c)
        for (std::int64_t i = 0; i < H * W; ++i)
          in.push_back(x[(n * C + c) * H * W + i]);
    outLo[0] = c0, outExtent[0] = c1 - c0;
    out.assign(c1 - c0, -7.0f);
    varLo.assign(10, 0);
    varHi = {c1, N, H, W, N, H, W, N, H, W};
    varLo[0] = c0;
    input = {ElementType::F32, 4, in.data(), inLo, inExtent};
    output = {ElementType::F32, 1, out.data(), outLo, outExtent};
    call = {&input, 1, output, varLo.data(), varHi.data()};
  }
};

TEST(BatchNormStatsTest, InvStdEqualsTheDefinition) {
  std::vector<float> x = data();
  BatchNormInvStd b = description();
  Call whole(x, 0, C, 0, C);
  ASSERT_TRUE(runBatchNormInvStd(b, whole.call));
  for (std::int64_t c = 0; c < C; ++c) {
    float want = reference(x, c, b.epsilon);
    EXPECT_EQ(std::memcmp(&whole.out[c], &want, sizeof(float)), 0)
        << c << ": " << whole.out[c] << " vs " << want;
  }
  // Channels 2-3 from a box holding channels 1-4.
  Call part(x, 2, 4, 1, 5);
  ASSERT_TRUE(runBatchNormInvStd(b, part.call));
  for (std::int64_t c = 2; c < 4; ++c) {
    float want = reference(x, c, b.epsilon);
    EXPECT_EQ(std::memcmp(&part.out[c - 2], &want, sizeof(float)), 0) << c;
  }
}

TEST(BatchNormStatsTest, DeclinesPartialSumsOtherTypesAndPartialBoxes) {
  std::vector<float> x = data();
  BatchNormInvStd b = description();
  Call split(x, 0, C, 0, C);
  split.varHi[5] = H - 1; // y3 split: a partial sum.
  EXPECT_FALSE(runBatchNormInvStd(b, split.call));
  EXPECT_EQ(split.out, std::vector<float>(C, -7.0f));
  Call f64(x, 0, C, 0, C);
  f64.input.type = ElementType::F64;
  EXPECT_FALSE(runBatchNormInvStd(b, f64.call));
  Call rows(x, 0, C, 0, C);
  rows.inExtent[2] = H - 1; // the box lacks the last row.
  EXPECT_FALSE(runBatchNormInvStd(b, rows.call));
  Call channels(x, 0, C, 1, C); // channel 0 is not in the box.
  EXPECT_FALSE(runBatchNormInvStd(b, channels.call));
  EXPECT_EQ(channels.out, std::vector<float>(C, -7.0f));
}

} // namespace
