//===- BatchNormStatsTest.cpp - A batch norm's inverse deviation loop -----===//
//
// Checks runBatchNormInvStd, runBatchNormMean, runBatchNormBackwardInput and
// the values taken from their sums (runtime/BatchNormStats.h) against the
// literal definitions of
// specs/norm.tdl's native_batch_norm__2 and native_batch_norm_backward__0
// on rank 4, written as the generated kernels evaluate them (double sums in
// (n, h, w) order, each in its own pass, then the same operations): equal
// bit for bit over every channel and over boxes of channels (and of images,
// rows and columns for the gradient) held in input boxes that start at a
// later channel; and that a call whose reduction variables are split, or
// not f32, or whose input box lacks part of (N, H, W), is declined without
// writing.
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

TEST(BatchNormStatsTest, MeanAndInvStdFromTheMeansSums) {
  std::vector<float> x = data();
  BatchNormInvStd inv = description(), mean = description();
  mean.varExtents = {N, H, W};
  // The mean of channels [1, 5) from a box holding them.
  Call m(x, 1, 5, 1, 5);
  BatchNormMoments moments;
  ASSERT_TRUE(runBatchNormMean(mean, m.call, moments));
  for (std::int64_t c = 1; c < 5; ++c) {
    double sum = 0;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < H * W; ++i)
        sum += double(x[(n * C + c) * H * W + i]);
    float want = float(sum / double(N * H * W));
    EXPECT_EQ(std::memcmp(&m.out[c - 1], &want, sizeof(float)), 0)
        << c << ": " << m.out[c - 1] << " vs " << want;
  }
  // The inverse deviation of channels [2, 4) reading the mean's box.
  Call v(x, 2, 4, 1, 5);
  v.input = m.input;
  ASSERT_TRUE(runBatchNormInvStdFromMoments(inv, moments, v.call));
  for (std::int64_t c = 2; c < 4; ++c) {
    float want = reference(x, c, inv.epsilon);
    EXPECT_EQ(std::memcmp(&v.out[c - 2], &want, sizeof(float)), 0)
        << c << ": " << v.out[c - 2] << " vs " << want;
  }
  // Declined without writing: another box of the same values, a channel
  // outside the sums' [1, 5).
  Call other(x, 2, 4, 1, 5);
  EXPECT_FALSE(runBatchNormInvStdFromMoments(inv, moments, other.call));
  Call outside(x, 0, 2, 0, 5);
  EXPECT_FALSE(runBatchNormInvStdFromMoments(inv, moments, outside.call));
  EXPECT_EQ(other.out, std::vector<float>(2, -7.0f));
  EXPECT_EQ(outside.out, std::vector<float>(2, -7.0f));
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

/// native_batch_norm_backward__0 as the generated kernel computes it, at
/// (n, c, h, w): two sums, each in its own pass, then the element.
float backwardReference(const std::vector<float> &dy,
                        const std::vector<float> &x,
                        const std::vector<float> &weight,
                        const std::vector<float> &mean,
                        const std::vector<float> &invstd, std::int64_t n,
                        std::int64_t c, std::int64_t h, std::int64_t w) {
  auto at = [&](const std::vector<float> &t, std::int64_t n, std::int64_t h,
                std::int64_t w) {
    return double(t[((n * C + c) * H + h) * W + w]);
  };
  double s1 = 0, s2 = 0;
  for (std::int64_t a = 0; a < N; ++a)
    for (std::int64_t b = 0; b < H; ++b)
      for (std::int64_t d = 0; d < W; ++d)
        s1 += at(dy, a, b, d);
  for (std::int64_t a = 0; a < N; ++a)
    for (std::int64_t b = 0; b < H; ++b)
      for (std::int64_t d = 0; d < W; ++d)
        s2 += (at(x, a, b, d) - double(mean[c])) * at(dy, a, b, d);
  const double M = double(N * H * W), i = double(invstd[c]);
  return float(((((at(dy, n, h, w) - (s1 / M)) -
                  ((((at(x, n, h, w) - double(mean[c])) * i) * i) * s2) / M) *
                 i) *
                double(weight[c])));
}

/// A box of a whole [N, C, H, W] tensor: images, rows and columns whole,
/// channels [c0, c1).
struct ChannelBox {
  std::vector<float> data;
  std::int64_t lo[4], extent[4];
  ChannelBox(const std::vector<float> &t, std::int64_t c0, std::int64_t c1)
      : lo{0, c0, 0, 0}, extent{N, c1 - c0, H, W} {
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t c = c0; c < c1; ++c)
        for (std::int64_t i = 0; i < H * W; ++i)
          data.push_back(t[(n * C + c) * H * W + i]);
  }
  BoxView view() { return {ElementType::F32, 4, data.data(), lo, extent}; }
};

/// An input gradient call's values: data() as x, random dy, weight, mean
/// and invstd from `seed`.
struct GradientInputs {
  std::vector<float> x = data(), dy, weight, mean, invstd;
  explicit GradientInputs(unsigned seed)
      : dy(x.size()), weight(C), mean(C), invstd(C) {
    std::mt19937 rng(seed);
    for (float &v : dy)
      v = float(int(rng() % 20001) - 10000) / 4999.0f;
    for (std::int64_t c = 0; c < C; ++c) {
      weight[c] = float(rng() % 100) / 37.0f;
      mean[c] = float(rng() % 1000) / 3.0f;
      invstd[c] = float(rng() % 1000 + 1) / 701.0f;
    }
  }
};

/// The input gradient kernel of an [N, C, H, W] input: two sums over
/// (n, y, x).
BatchNormBackwardInput backwardDescription() {
  BatchNormBackwardInput b;
  std::int64_t shape[4] = {N, C, H, W};
  std::memcpy(b.shape, shape, sizeof(shape));
  for (int i = 0; i != 2; ++i)
    b.varExtents.insert(b.varExtents.end(), {N, H, W});
  return b;
}

TEST(BatchNormStatsTest, InputGradientEqualsTheDefinition) {
  GradientInputs values(5);
  std::vector<float> &x = values.x, &dy = values.dy, &weight = values.weight,
                     &mean = values.mean, &invstd = values.invstd;
  BatchNormBackwardInput b = backwardDescription();
  // The whole output, then images [1, 3), channels [1, 3), rows [1, 3),
  // columns [2, 5) from boxes of channels [1, 4).
  struct Box {
    std::int64_t lo[4], hi[4];
  } boxes[] = {{{0, 0, 0, 0}, {N, C, H, W}}, {{1, 1, 1, 2}, {3, 3, 3, 5}}};
  for (const Box &box : boxes) {
    std::int64_t i0 = box.lo[1] ? 1 : 0, i1 = box.lo[1] ? 4 : C;
    ChannelBox g(dy, i0, i1), in(x, i0, i1);
    std::int64_t chLo[1] = {i0}, chExtent[1] = {i1 - i0};
    BoxView inputs[5] = {
        g.view(), in.view(),
        {ElementType::F32, 1, weight.data() + i0, chLo, chExtent},
        {ElementType::F32, 1, mean.data() + i0, chLo, chExtent},
        {ElementType::F32, 1, invstd.data() + i0, chLo, chExtent}};
    std::int64_t extent[4], size = 1;
    for (int d = 0; d != 4; ++d)
      extent[d] = box.hi[d] - box.lo[d], size *= extent[d];
    std::vector<float> out(size, -7.0f);
    std::vector<std::int64_t> varLo(box.lo, box.lo + 4),
        varHi(box.hi, box.hi + 4);
    for (std::int64_t e : b.varExtents)
      varLo.push_back(0), varHi.push_back(e);
    KernelCall call{inputs, 5,
                    {ElementType::F32, 4, out.data(), box.lo, extent},
                    varLo.data(), varHi.data()};
    ASSERT_TRUE(runBatchNormBackwardInput(b, call));
    std::int64_t i = 0;
    for (std::int64_t n = box.lo[0]; n < box.hi[0]; ++n)
      for (std::int64_t c = box.lo[1]; c < box.hi[1]; ++c)
        for (std::int64_t h = box.lo[2]; h < box.hi[2]; ++h)
          for (std::int64_t w = box.lo[3]; w < box.hi[3]; ++w, ++i) {
            float want =
                backwardReference(dy, x, weight, mean, invstd, n, c, h, w);
            ASSERT_EQ(std::memcmp(&out[i], &want, sizeof(float)), 0)
                << n << " " << c << " " << h << " " << w << ": " << out[i]
                << " vs " << want;
          }
    // A split sum (n2) is declined without writing.
    varHi[7] = N - 1;
    std::vector<float> before = out;
    EXPECT_FALSE(runBatchNormBackwardInput(b, call));
    EXPECT_EQ(out, before);
  }
}

TEST(BatchNormStatsTest, WeightAndBiasGradientsFromTheInputGradientsSums) {
  GradientInputs values(7);
  std::vector<float> &x = values.x, &dy = values.dy, &weight = values.weight,
                     &mean = values.mean, &invstd = values.invstd;
  BatchNormBackwardInput b = backwardDescription();
  // The input gradient of channels [1, 4) from boxes of those channels.
  const std::int64_t c0 = 1, c1 = 4;
  ChannelBox g(dy, c0, c1), in(x, c0, c1);
  std::int64_t chLo[1] = {c0}, chExtent[1] = {c1 - c0};
  BoxView inputs[5] = {
      g.view(), in.view(),
      {ElementType::F32, 1, weight.data() + c0, chLo, chExtent},
      {ElementType::F32, 1, mean.data() + c0, chLo, chExtent},
      {ElementType::F32, 1, invstd.data() + c0, chLo, chExtent}};
  std::int64_t outLo[4] = {0, c0, 0, 0}, outExtent[4] = {N, c1 - c0, H, W};
  std::vector<float> dx(N * (c1 - c0) * H * W);
  std::vector<std::int64_t> varLo = {0, c0, 0, 0, 0, 0, 0, 0, 0, 0},
                            varHi = {N, c1, H, W, N, H, W, N, H, W};
  KernelCall call{inputs, 5,
                  {ElementType::F32, 4, dx.data(), outLo, outExtent},
                  varLo.data(), varHi.data()};
  BatchNormSums sums;
  ASSERT_TRUE(runBatchNormBackwardInput(b, call, sums));
  EXPECT_EQ(sums.c0, c0);
  EXPECT_EQ(sums.c1, c1);

  // The generated kernels' definitions: Sum((x - mean) dy) * invstd and
  // Sum(dy), each summed in its own pass in (n, h, w) order.
  auto definition = [&](bool weightGrad, std::int64_t c) {
    double s = 0;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w) {
          std::int64_t i = ((n * C + c) * H + h) * W + w;
          s += weightGrad ? (double(x[i]) - double(mean[c])) * double(dy[i])
                          : double(dy[i]);
        }
    return float(weightGrad ? s * double(invstd[c]) : s);
  };
  for (bool weightGrad : {true, false}) {
    BatchNormParamGrad p;
    p.weight = weightGrad;
    p.varExtents = {N, H, W};
    // Channels [2, 4) of the sums' [1, 4).
    std::int64_t oLo[1] = {2}, oExtent[1] = {2};
    std::vector<float> out(2, -7.0f);
    std::vector<std::int64_t> pLo = {2, 0, 0, 0}, pHi = {4, N, H, W};
    BoxView pIn[4] = {inputs[0], inputs[1], inputs[3], inputs[4]};
    KernelCall pc{pIn, weightGrad ? 4u : 1u,
                  {ElementType::F32, 1, out.data(), oLo, oExtent},
                  pLo.data(), pHi.data()};
    ASSERT_TRUE(runBatchNormParamGradFromSums(p, sums, pc));
    for (std::int64_t c = 2; c < 4; ++c) {
      float want = definition(weightGrad, c);
      EXPECT_EQ(std::memcmp(&out[c - 2], &want, sizeof(float)), 0)
          << weightGrad << " " << c << ": " << out[c - 2] << " vs " << want;
    }
    // Declined without writing: a channel outside the sums, a split sum,
    // another grad_out box (a copy of the same values elsewhere).
    std::vector<float> before = out;
    pLo[0] = 0;
    EXPECT_FALSE(runBatchNormParamGradFromSums(p, sums, pc));
    pLo[0] = 2;
    pHi[1] = N - 1;
    EXPECT_FALSE(runBatchNormParamGradFromSums(p, sums, pc));
    pHi[1] = N;
    ChannelBox copy(dy, c0, c1);
    pIn[0] = copy.view();
    EXPECT_FALSE(runBatchNormParamGradFromSums(p, sums, pc));
    EXPECT_EQ(out, before);
  }
}

} // namespace
