//===- BatchNormStats.cpp - A batch norm's inverse deviation in one pass --===//
//
// This file implements runBatchNormInvStd, runBatchNormBackwardInput and
// runBatchNormParamGradFromSums (BatchNormStats.h) with the generated
// kernels' arithmetic: double sums in (n, h, w) order, the same operations
// in the same order, rounded to f32 once.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/BatchNormStats.h"

#include <cmath>
#include <type_traits>

using namespace tofu::runtime;

namespace {
/// Row-major strides of a rank-4 box.
struct Strides4 {
  std::int64_t n, c, h;
  explicit Strides4(const BoxView &v)
      : n(v.extent[1] * v.extent[2] * v.extent[3]),
        c(v.extent[2] * v.extent[3]), h(v.extent[3]) {}
};

/// Whether the rank-4 box `v` holds the whole (N, H, W) of channels
/// [c0, c1) of a tensor of shape `shape`.
bool holdsChannels(const BoxView &v, const std::int64_t shape[4],
                   std::int64_t c0, std::int64_t c1) {
  if (v.rank != 4 || v.type != ElementType::F32)
    return false;
  for (unsigned d : {0u, 2u, 3u})
    if (v.lo[d] > 0 || v.lo[d] + v.extent[d] < shape[d])
      return false;
  return c0 >= v.lo[1] && c1 <= v.lo[1] + v.extent[1];
}

/// Whether the call's variables from `first` on range over their whole
/// `extents` (no `reduce` share: the sums are whole).
bool wholeSums(const KernelCall &call, unsigned first,
               const std::vector<std::int64_t> &extents) {
  for (std::size_t v = 0; v != extents.size(); ++v)
    if (call.varLo[first + v] > 0 || call.varHi[first + v] < extents[v])
      return false;
  return true;
}

/// Element (n, c, h, 0) of a rank-4 box, in global coordinates.
const float *at4(const BoxView &v, const Strides4 &s, std::int64_t n,
                 std::int64_t c, std::int64_t h) {
  return static_cast<const float *>(v.data) + (n - v.lo[0]) * s.n +
         (c - v.lo[1]) * s.c + (h - v.lo[2]) * s.h - v.lo[3];
}

/// S1 = Sum(dy) and S2 = Sum((x - mean) dy) of channels [c, c + K), each
/// channel's sums in (n, h, w) order; K channels side by side so that K
/// chains of additions overlap (each channel's chain is unchanged).
template <int K>
void sumGradients(const BoxView &dy, const Strides4 &sd, const BoxView &x,
                  const Strides4 &sx, const float *mean, std::int64_t c,
                  const std::int64_t shape[4], double *s1, double *s2) {
  double a[K] = {}, b[K] = {}, mc[K];
  for (int k = 0; k != K; ++k)
    mc[k] = double(mean[c + k]);
  const float *g[K], *v[K];
  for (std::int64_t n = 0; n < shape[0]; ++n)
    for (std::int64_t h = 0; h < shape[2]; ++h) {
      for (int k = 0; k != K; ++k) {
        g[k] = at4(dy, sd, n, c + k, h);
        v[k] = at4(x, sx, n, c + k, h);
      }
      for (std::int64_t col = 0; col < shape[3]; ++col)
        for (int k = 0; k != K; ++k) {
          a[k] += double(g[k][col]);
          b[k] += (double(v[k][col]) - mc[k]) * double(g[k][col]);
        }
    }
  for (int k = 0; k != K; ++k)
    s1[k] = a[k], s2[k] = b[k];
}

/// Whether the rank-1 f32 box `v` holds [c0, c1).
bool holdsRange(const BoxView &v, std::int64_t c0, std::int64_t c1) {
  return v.rank == 1 && v.type == ElementType::F32 && c0 >= v.lo[0] &&
         c1 <= v.lo[0] + v.extent[0];
}
} // namespace

namespace {
/// Sums Sum(x) and Sum(x x) of channels [c0, c1) of `x` (whole N, H, W) in
/// the kernels' order into `sum` and `squares`.
void sumMoments(const BatchNormInvStd &b, const BoxView &x, std::int64_t c0,
                std::int64_t c1, std::vector<double> &sum,
                std::vector<double> &squares) {
  const std::int64_t N = b.shape[0], H = b.shape[2], W = b.shape[3];
  const std::int64_t sW = 1, sH = x.extent[3], sC = sH * x.extent[2],
                     sN = sC * x.extent[1];
  const float *data = static_cast<const float *>(x.data) - x.lo[0] * sN -
                      x.lo[2] * sH - x.lo[3] * sW;
  sum.assign(std::size_t(c1 - c0), 0.0);
  squares.assign(std::size_t(c1 - c0), 0.0);
  // Channels [c, c + K) side by side: K chains of additions overlap, each
  // channel's chain unchanged.
  auto channels = [&](std::int64_t c, auto width) {
    constexpr int K = decltype(width)::value;
    double s[K] = {}, sq[K] = {};
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t h = 0; h < H; ++h) {
        const float *row = data + (c - x.lo[1]) * sC + n * sN + h * sH;
        for (std::int64_t w = 0; w < W; ++w)
          for (int k = 0; k != K; ++k) {
            double v = double(row[k * sC + w]);
            sq[k] += v * v;
            s[k] += v;
          }
      }
    for (int k = 0; k != K; ++k) {
      sum[std::size_t(c - c0 + k)] = s[k];
      squares[std::size_t(c - c0 + k)] = sq[k];
    }
  };
  std::int64_t c = c0;
  for (; c + 4 <= c1; c += 4)
    channels(c, std::integral_constant<int, 4>());
  for (; c < c1; ++c)
    channels(c, std::integral_constant<int, 1>());
}

/// Whether `call` is a per-channel call of `b`'s kernel on one f32 input
/// with whole sums, its channels [c0, c1) held by its input box.
bool coveredChannelCall(const BatchNormInvStd &b, const KernelCall &call) {
  if (call.numInputs != 1 || call.output.type != ElementType::F32 ||
      call.output.rank != 1 || !wholeSums(call, 1, b.varExtents))
    return false;
  const std::int64_t c0 = call.varLo[0], c1 = call.varHi[0];
  return c0 >= c1 || holdsChannels(call.inputs[0], b.shape, c0, c1);
}

/// Writes channels [c0, c1) of the inverse deviation from the sums of
/// channels from `first` on.
void writeInvStd(const BatchNormInvStd &b, const std::vector<double> &sum,
                 const std::vector<double> &squares, std::int64_t first,
                 const KernelCall &call) {
  const std::int64_t M0 = b.shape[0] * b.shape[2] * b.shape[3];
  const double M = double(M0), MM = double(M0 * M0);
  float *out = static_cast<float *>(call.output.data) - call.output.lo[0];
  for (std::int64_t c = call.varLo[0]; c < call.varHi[0]; ++c) {
    std::size_t k = std::size_t(c - first);
    out[c] = float(
        1.0 / std::sqrt(squares[k] / M - sum[k] * sum[k] / MM + b.epsilon));
  }
}
} // namespace

bool tofu::runtime::runBatchNormInvStd(const BatchNormInvStd &b,
                                       const KernelCall &call) {
  if (!coveredChannelCall(b, call))
    return false;
  const std::int64_t c0 = call.varLo[0], c1 = call.varHi[0];
  if (c0 >= c1)
    return true;
  std::vector<double> sum, squares;
  sumMoments(b, call.inputs[0], c0, c1, sum, squares);
  writeInvStd(b, sum, squares, c0, call);
  return true;
}

bool tofu::runtime::runBatchNormMean(const BatchNormInvStd &b,
                                     const KernelCall &call,
                                     BatchNormMoments &moments) {
  if (!coveredChannelCall(b, call))
    return false;
  const std::int64_t c0 = call.varLo[0], c1 = call.varHi[0];
  moments = BatchNormMoments();
  if (c0 >= c1)
    return true;
  moments.c0 = c0;
  moments.c1 = c1;
  moments.input = BoxKey(call.inputs[0]);
  sumMoments(b, call.inputs[0], c0, c1, moments.sum, moments.squares);
  const double M = double(b.shape[0] * b.shape[2] * b.shape[3]);
  float *out = static_cast<float *>(call.output.data) - call.output.lo[0];
  for (std::int64_t c = c0; c < c1; ++c)
    out[c] = float(moments.sum[std::size_t(c - c0)] / M);
  return true;
}

bool tofu::runtime::runBatchNormInvStdFromMoments(
    const BatchNormInvStd &b, const BatchNormMoments &moments,
    const KernelCall &call) {
  if (!coveredChannelCall(b, call))
    return false;
  const std::int64_t c0 = call.varLo[0], c1 = call.varHi[0];
  if (c0 >= c1)
    return true;
  if (c0 < moments.c0 || c1 > moments.c1 ||
      !moments.input.matches(call.inputs[0]))
    return false;
  writeInvStd(b, moments.sum, moments.squares, moments.c0, call);
  return true;
}

namespace {
/// runBatchNormBackwardInput; records the sums in `sums` if not null.
bool backwardInput(const BatchNormBackwardInput &b, const KernelCall &call,
                   BatchNormSums *sums) {
  if (call.numInputs != 5 || call.output.type != ElementType::F32 ||
      call.output.rank != 4 || !wholeSums(call, 4, b.varExtents))
    return false;
  const std::int64_t *lo = call.varLo, *hi = call.varHi;
  for (unsigned d = 0; d != 4; ++d)
    if (lo[d] >= hi[d]) {
      if (sums)
        *sums = BatchNormSums();
      return true;
    }
  const BoxView &dy = call.inputs[0], &x = call.inputs[1],
                &weight = call.inputs[2], &mean = call.inputs[3],
                &invstd = call.inputs[4], &out = call.output;
  const std::int64_t c0 = lo[1], c1 = hi[1];
  if (!holdsChannels(dy, b.shape, c0, c1) ||
      !holdsChannels(x, b.shape, c0, c1) || !holdsRange(weight, c0, c1) ||
      !holdsRange(mean, c0, c1) || !holdsRange(invstd, c0, c1))
    return false;
  const std::int64_t N = b.shape[0], H = b.shape[2], W = b.shape[3];
  const double M = double(N * H * W);
  Strides4 sd(dy), sx(x), so(out);
  // Element (n, c, h, w) of a box, in global coordinates.
  auto at = [](const BoxView &v, const Strides4 &s, std::int64_t n,
               std::int64_t c, std::int64_t h) {
    return static_cast<const float *>(v.data) + (n - v.lo[0]) * s.n +
           (c - v.lo[1]) * s.c + (h - v.lo[2]) * s.h - v.lo[3];
  };
  const float *w = static_cast<const float *>(weight.data) - weight.lo[0];
  const float *m = static_cast<const float *>(mean.data) - mean.lo[0];
  const float *is = static_cast<const float *>(invstd.data) - invstd.lo[0];
  if (sums) {
    sums->c0 = c0;
    sums->c1 = c1;
    sums->s1.assign(std::size_t(c1 - c0), 0.0);
    sums->s2.assign(std::size_t(c1 - c0), 0.0);
    sums->gradOut = BoxKey(dy);
    sums->input = BoxKey(x);
    sums->mean = BoxKey(mean);
  }
  // Dividing by a power of two M equals multiplying by its exact
  // reciprocal (both round the same real number): ResNet's M are powers of
  // two, and the element loop then has no division.
  const std::int64_t M0 = N * H * W;
  const bool powerOfTwo = (M0 & (M0 - 1)) == 0;
  const double invM = 1.0 / M;
  std::vector<double> S1(std::size_t(c1 - c0)), S2(std::size_t(c1 - c0));
  for (std::int64_t c = c0; c < c1;) {
    std::size_t k = std::size_t(c - c0);
    if (c + 4 <= c1) {
      sumGradients<4>(dy, sd, x, sx, m, c, b.shape, &S1[k], &S2[k]);
      c += 4;
    } else {
      sumGradients<1>(dy, sd, x, sx, m, c, b.shape, &S1[k], &S2[k]);
      c += 1;
    }
  }
  for (std::int64_t c = c0; c < c1; ++c) {
    const double mc = double(m[c]), ic = double(is[c]), wc = double(w[c]);
    const double s1 = S1[std::size_t(c - c0)], s2 = S2[std::size_t(c - c0)];
    if (sums) {
      sums->s1[std::size_t(c - c0)] = s1;
      sums->s2[std::size_t(c - c0)] = s2;
    }
    const double mean1 = s1 / M;
    // The kernel's element: ((dy - S1 / M) - ((x - mean) ic ic S2) / M) ic wc.
    auto elements = [&](auto overM) {
      for (std::int64_t n = lo[0]; n < hi[0]; ++n)
        for (std::int64_t h = lo[2]; h < hi[2]; ++h) {
          const float *g = at(dy, sd, n, c, h), *v = at(x, sx, n, c, h);
          float *o = const_cast<float *>(at(out, so, n, c, h));
          for (std::int64_t col = lo[3]; col < hi[3]; ++col)
            o[col] = float(
                (((double(g[col]) - mean1) -
                  overM((((double(v[col]) - mc) * ic) * ic) * s2)) *
                 ic) *
                wc);
        }
    };
    if (powerOfTwo)
      elements([invM](double t) { return t * invM; });
    else
      elements([M](double t) { return t / M; });
  }
  return true;
}
} // namespace

bool tofu::runtime::runBatchNormBackwardInput(const BatchNormBackwardInput &b,
                                              const KernelCall &call) {
  return backwardInput(b, call, nullptr);
}

bool tofu::runtime::runBatchNormBackwardInput(const BatchNormBackwardInput &b,
                                              const KernelCall &call,
                                              BatchNormSums &sums) {
  return backwardInput(b, call, &sums);
}

BoxKey::BoxKey(const BoxView &v) : data(v.data), rank(v.rank) {
  for (unsigned d = 0; d != rank && d != 4; ++d) {
    lo[d] = v.lo[d];
    extent[d] = v.extent[d];
  }
}

bool BoxKey::matches(const BoxView &v) const {
  if (v.data != data || v.rank != rank || rank > 4)
    return false;
  for (unsigned d = 0; d != rank; ++d)
    if (v.lo[d] != lo[d] || v.extent[d] != extent[d])
      return false;
  return true;
}

bool tofu::runtime::runBatchNormParamGradFromSums(const BatchNormParamGrad &g,
                                                  const BatchNormSums &sums,
                                                  const KernelCall &call) {
  if (call.numInputs != (g.weight ? 4u : 1u) ||
      call.output.type != ElementType::F32 || call.output.rank != 1 ||
      !wholeSums(call, 1, g.varExtents))
    return false;
  const std::int64_t c0 = call.varLo[0], c1 = call.varHi[0];
  if (c0 < sums.c0 || c1 > sums.c1 || !sums.gradOut.matches(call.inputs[0]))
    return false;
  if (g.weight && (!sums.input.matches(call.inputs[1]) ||
                   !sums.mean.matches(call.inputs[2]) ||
                   !holdsRange(call.inputs[3], c0, c1)))
    return false;
  float *out = static_cast<float *>(call.output.data) - call.output.lo[0];
  const float *is =
      g.weight ? static_cast<const float *>(call.inputs[3].data) -
                     call.inputs[3].lo[0]
               : nullptr;
  for (std::int64_t c = c0; c < c1; ++c) {
    std::size_t k = std::size_t(c - sums.c0);
    out[c] = g.weight ? float(sums.s2[k] * double(is[c])) : float(sums.s1[k]);
  }
  return true;
}
