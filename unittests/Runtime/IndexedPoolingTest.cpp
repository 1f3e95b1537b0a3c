//===- IndexedPoolingTest.cpp - Max pooling's indices and gradient loops --===//
//
// Checks runIndexedPooling (runtime/IndexedPooling.h) against the literal
// definitions of specs/pool.tdl's max_pool2d_with_indices__1 and
// max_pool2d_with_indices_backward, written as the generated kernels
// evaluate them (every window position, double arithmetic, floor division,
// NaN-propagating maximum): equal bit for bit over whole boxes and over
// boxes of part of the batch, channels, rows and columns, for padded,
// strided, dilated and partial (ceil mode) windows, with ties, NaNs and
// infinities in the data, indices outside their windows and gradients
// whose sums depend on their order; and that a call whose window
// variables are split, or whose types are not f32 / i64, is declined
// without writing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/IndexedPooling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tofu::runtime;

namespace {

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

double maxOf(double a, double b) {
  double m = a > b ? a : b;
  return a != a ? a : m;
}

struct Case {
  IndexedPooling p;
  std::vector<float> x, grad;
  /// max_pool2d_with_indices__1's output, and the indices the gradient
  /// reads.
  std::vector<std::int64_t> indices, gradIndices;

  Case(std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W,
       std::int64_t ky, std::int64_t kx, std::int64_t sy, std::int64_t sx,
       std::int64_t py, std::int64_t px, std::int64_t dy, std::int64_t dx,
       bool ceil) {
    std::int64_t params[4][2] = {{ky, kx}, {sy, sx}, {py, px}, {dy, dx}};
    for (int a = 0; a != 2; ++a) {
      p.window[a] = params[0][a], p.stride[a] = params[1][a];
      p.padding[a] = params[2][a], p.dilation[a] = params[3][a];
    }
    std::int64_t in[4] = {N, C, H, W};
    for (int d = 0; d != 4; ++d)
      p.inputShape[d] = p.pooledShape[d] = in[d];
    for (int a = 0; a != 2; ++a) {
      std::int64_t span = p.dilation[a] * (p.window[a] - 1);
      p.pooledShape[2 + a] =
          (in[2 + a] + 2 * p.padding[a] - span - 1 +
           (ceil ? p.stride[a] - 1 : 0)) / p.stride[a] + 1;
    }
    // Few distinct values (ties), and -inf, the lowest f32 and NaN.
    std::mt19937 rng(7);
    x.resize(N * C * H * W);
    const float special[] = {-std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::lowest(),
                             std::numeric_limits<float>::quiet_NaN()};
    for (float &v : x) {
      unsigned r = rng() % 64;
      v = r < 3 ? special[r] : float(int(rng() % 7) - 3);
    }
    grad.resize(pooledSize());
    // Some huge gradients, so that sums depend on their order.
    for (float &v : grad)
      v = rng() % 4 == 0 ? (rng() % 2 ? 1e30f : -1e30f)
                         : float(rng() % 1000) / 7.0f - 50.0f;
    indices = indicesRef();
    // The gradient reads any indices: some name a position outside their
    // window (which the definition never adds to) or the plane's end.
    std::vector<std::int64_t> scattered = indices;
    for (std::int64_t &i : scattered)
      if (rng() % 8 == 0)
        i = std::int64_t(rng() % (H * W + 1));
    gradIndices = scattered;
  }

  std::int64_t pooledSize() const {
    return p.pooledShape[0] * p.pooledShape[1] * p.pooledShape[2] *
           p.pooledShape[3];
  }

  /// The definition of max_pool2d_with_indices__1 as the generated kernel
  /// computes it, over the whole output.
  std::vector<std::int64_t> indicesRef() const {
    const std::int64_t H = p.inputShape[2], W = p.inputShape[3];
    std::vector<std::int64_t> out;
    for (std::int64_t n = 0; n < p.pooledShape[0]; ++n)
      for (std::int64_t c = 0; c < p.pooledShape[1]; ++c)
        for (std::int64_t y = 0; y < p.pooledShape[2]; ++y)
          for (std::int64_t xo = 0; xo < p.pooledShape[3]; ++xo) {
            auto at = [&](std::int64_t ky, std::int64_t kx, bool &in) {
              std::int64_t r = y * p.stride[0] + ky * p.dilation[0] - p.padding[0];
              std::int64_t col = xo * p.stride[1] + kx * p.dilation[1] - p.padding[1];
              in = r >= 0 && r < H && col >= 0 && col < W;
              return r * W + col;
            };
            const float *plane = &x[(n * p.inputShape[1] + c) * H * W];
            double m = -std::numeric_limits<double>::infinity();
            for (std::int64_t ky = 0; ky < p.window[0]; ++ky)
              for (std::int64_t kx = 0; kx < p.window[1]; ++kx) {
                bool in;
                std::int64_t i = at(ky, kx, in);
                m = maxOf(in ? double(plane[i]) : -3.4028234663852886e38, m);
              }
            double r = std::numeric_limits<double>::infinity();
            for (std::int64_t ky = 0; ky < p.window[0]; ++ky)
              for (std::int64_t kx = 0; kx < p.window[1]; ++kx) {
                bool in;
                std::int64_t i = at(ky, kx, in);
                double v = in && double(plane[i]) == m ? double(i) : double(H * W);
                r = v < r ? v : r;
              }
            out.push_back(std::int64_t(r));
          }
    return out;
  }

  /// The definition of max_pool2d_with_indices_backward as the generated
  /// kernel computes it, over the whole output.
  std::vector<float> backwardRef() const {
    const std::int64_t H = p.inputShape[2], W = p.inputShape[3],
                       OH = p.pooledShape[2], OW = p.pooledShape[3];
    std::vector<float> out;
    for (std::int64_t n = 0; n < p.inputShape[0]; ++n)
      for (std::int64_t c = 0; c < p.inputShape[1]; ++c)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t w = 0; w < W; ++w) {
            std::int64_t base = (n * p.inputShape[1] + c) * OH * OW;
            double r = 0.0;
            for (std::int64_t ky = 0; ky < p.window[0]; ++ky)
              for (std::int64_t kx = 0; kx < p.window[1]; ++kx) {
                std::int64_t ty = h + p.padding[0] - ky * p.dilation[0];
                std::int64_t tx = w + p.padding[1] - kx * p.dilation[1];
                std::int64_t oy = floorDiv(ty, p.stride[0]);
                std::int64_t ox = floorDiv(tx, p.stride[1]);
                bool in = oy >= 0 && oy < OH && ox >= 0 && ox < OW;
                double index =
                    in ? double(gradIndices[base + oy * OW + ox]) : 0.0;
                if (ty - oy * p.stride[0] == 0 && tx - ox * p.stride[1] == 0 &&
                    index == double(h * W + w))
                  r += in ? double(grad[base + oy * OW + ox]) : 0.0;
              }
            out.push_back(float(r));
          }
    return out;
  }
};

/// A copy of whole tensor `t` (shape `shape`) cropped to [lo, hi) in every
/// dimension, as a box.
template <typename T> struct Crop {
  std::vector<T> data;
  std::int64_t lo[4], extent[4];
  Crop(const std::vector<T> &t, const std::int64_t shape[4],
       const std::int64_t l[4], const std::int64_t h[4]) {
    for (int d = 0; d != 4; ++d)
      lo[d] = l[d], extent[d] = h[d] - l[d];
    for (std::int64_t a = l[0]; a < h[0]; ++a)
      for (std::int64_t b = l[1]; b < h[1]; ++b)
        for (std::int64_t c = l[2]; c < h[2]; ++c)
          for (std::int64_t d = l[3]; d < h[3]; ++d)
            data.push_back(
                t[((a * shape[1] + b) * shape[2] + c) * shape[3] + d]);
  }
  BoxView view(ElementType type) {
    return {type, 4, data.data(), lo, extent};
  }
};

/// Runs `kind` over the output box [lo, hi) (inputs cropped to the batch
/// and channels of the box, whole in rows and columns) and checks every
/// element of the box against the definition.
void checkBox(const Case &k, IndexedPoolingKind kind,
              const std::int64_t lo[4], const std::int64_t hi[4]) {
  IndexedPooling p = k.p;
  p.kind = kind;
  bool indices = kind == IndexedPoolingKind::Indices;
  p.windowAxes = indices ? std::vector<std::uint8_t>{0, 1, 0, 1}
                         : std::vector<std::uint8_t>{0, 1};
  std::int64_t inLo[4] = {lo[0], lo[1], 0, 0};
  std::int64_t xHi[4] = {hi[0], hi[1], p.inputShape[2], p.inputShape[3]};
  std::int64_t pHi[4] = {hi[0], hi[1], p.pooledShape[2], p.pooledShape[3]};
  Crop<float> x(k.x, p.inputShape, inLo, xHi);
  Crop<float> g(k.grad, p.pooledShape, inLo, pHi);
  Crop<std::int64_t> ind(k.gradIndices, p.pooledShape, inLo, pHi);
  std::vector<std::int64_t> varLo(lo, lo + 4), varHi(hi, hi + 4);
  for (std::uint8_t a : p.windowAxes)
    varLo.push_back(0), varHi.push_back(p.window[a]);
  const std::int64_t *outShape = indices ? p.pooledShape : p.inputShape;
  std::int64_t extent[4];
  std::int64_t size = 1;
  for (int d = 0; d != 4; ++d)
    extent[d] = hi[d] - lo[d], size *= extent[d];
  std::vector<std::int64_t> outI(size, -7);
  std::vector<float> outF(size, -7.0f);
  BoxView inputs[3] = {indices ? x.view(ElementType::F32)
                               : g.view(ElementType::F32),
                       x.view(ElementType::F32), ind.view(ElementType::I64)};
  BoxView out = indices ? BoxView{ElementType::I64, 4, outI.data(), lo, extent}
                        : BoxView{ElementType::F32, 4, outF.data(), lo, extent};
  KernelCall call{inputs, indices ? 1u : 3u, out, varLo.data(), varHi.data()};
  ASSERT_TRUE(runIndexedPooling(p, call));
  std::vector<std::int64_t> refI = indices ? k.indices : std::vector<std::int64_t>();
  std::vector<float> refF = indices ? std::vector<float>() : k.backwardRef();
  std::int64_t i = 0;
  for (std::int64_t a = lo[0]; a < hi[0]; ++a)
    for (std::int64_t b = lo[1]; b < hi[1]; ++b)
      for (std::int64_t c = lo[2]; c < hi[2]; ++c)
        for (std::int64_t d = lo[3]; d < hi[3]; ++d, ++i) {
          std::int64_t at =
              ((a * outShape[1] + b) * outShape[2] + c) * outShape[3] + d;
          if (indices)
            ASSERT_EQ(outI[i], refI[at]) << a << " " << b << " " << c << " " << d;
          else
            ASSERT_EQ(std::memcmp(&outF[i], &refF[at], sizeof(float)), 0)
                << a << " " << b << " " << c << " " << d << ": " << outF[i]
                << " vs " << refF[at];
        }
}

void checkCase(const Case &k) {
  for (IndexedPoolingKind kind :
       {IndexedPoolingKind::Indices, IndexedPoolingKind::Backward}) {
    const std::int64_t *shape = kind == IndexedPoolingKind::Indices
                                    ? k.p.pooledShape
                                    : k.p.inputShape;
    std::int64_t zero[4] = {0, 0, 0, 0};
    checkBox(k, kind, zero, shape);
    // Part of every dimension: the second image, channels 1-2, the middle
    // rows and columns.
    std::int64_t lo[4] = {1, 1, 1, 2};
    std::int64_t hi[4] = {2, 3, shape[2] - 1, shape[3] - 1};
    checkBox(k, kind, lo, hi);
  }
}

TEST(IndexedPoolingTest, PaddedStridedWindowsEqualTheDefinition) {
  // ResNet's stem pooling: 3x3, stride 2, padding 1.
  checkCase(Case(2, 3, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, false));
  // Stride 1: up to 9 windows name one position.
  checkCase(Case(2, 3, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, false));
}

TEST(IndexedPoolingTest, DilatedAndUnevenWindowsEqualTheDefinition) {
  checkCase(Case(2, 3, 9, 11, 2, 3, 1, 2, 0, 1, 2, 1, false));
  checkCase(Case(2, 3, 10, 12, 3, 2, 3, 2, 1, 0, 1, 2, false));
}

TEST(IndexedPoolingTest, CeilModeWindowsEqualTheDefinition) {
  // The last window of each axis reaches past the input.
  checkCase(Case(2, 3, 8, 10, 3, 3, 2, 2, 0, 0, 1, 1, true));
}

TEST(IndexedPoolingTest, DeclinesSplitWindowsAndOtherTypes) {
  Case k(1, 1, 4, 4, 2, 2, 2, 2, 0, 0, 1, 1, false);
  IndexedPooling p = k.p;
  p.windowAxes = {0, 1, 0, 1};
  std::int64_t zero[4] = {0, 0, 0, 0};
  BoxView x{ElementType::F32, 4, k.x.data(), zero, p.inputShape};
  std::vector<std::int64_t> out(4, -7);
  BoxView o{ElementType::I64, 4, out.data(), zero, p.pooledShape};
  std::int64_t lo[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t hi[8] = {1, 1, 2, 2, 2, 2, 2, 2};
  KernelCall call{&x, 1, o, lo, hi};
  EXPECT_TRUE(runIndexedPooling(p, call));
  hi[5] = 1; // kx split: a partial result.
  out.assign(4, -7);
  EXPECT_FALSE(runIndexedPooling(p, call));
  hi[5] = 2;
  lo[6] = 1; // my split.
  EXPECT_FALSE(runIndexedPooling(p, call));
  lo[6] = 0;
  x.type = ElementType::F64;
  EXPECT_FALSE(runIndexedPooling(p, call));
  EXPECT_EQ(out, std::vector<std::int64_t>(4, -7));
}

} // namespace
