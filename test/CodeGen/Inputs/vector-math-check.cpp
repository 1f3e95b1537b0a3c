// The kernel prelude's vector exp, erf and tanh against the C library's
// (test/CodeGen/vector-math.test; docs/CodeGen.md, "Vectorized exp and
// erf"). Compiled with `-include` of a gelu_backward kernel emitted by
// tdlc (prelude and kernel `tofu_k_gelu_backward`, 4096 elements): checks
// vexp, verf, tdl_Sigmoid and vtanh over sweeps of doubles within the
// documented relative bounds, the special values, and the kernel's f32
// results against the evaluator's formula with std::erf and std::exp (at
// most one ulp apart). Prints the largest errors and a hash of the kernel's output bits,
// so two builds (AVX2 copy, baseline only) can be compared bit for bit.
// Exit status 1 when a check fails.

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {
int failures = 0;

void fail(const char *what, double a, double got, double want) {
  if (++failures <= 10)
    std::printf("FAIL %s(%.17g) = %.17g, want %.17g\n", what, a, got, want);
}

/// Checks that `got` is within `bound` of `want`, relative; keeps the
/// largest relative error in `worst`.
void checkRelative(const char *what, double a, double got, double want,
                   double bound, double &worst) {
  double error = std::fabs(got - want) / std::fabs(want);
  worst = std::max(worst, error);
  if (!(error <= bound))
    fail(what, a, got, want);
}

/// Sweep points: a uniform grid over [lo, hi] and normal samples.
std::vector<double> points(double lo, double hi, double sigma) {
  std::vector<double> v;
  for (int i = 0; i <= 1000000; ++i)
    v.push_back(lo + (hi - lo) * i / 1000000.0);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> d(0.0, sigma);
  for (int i = 0; i < 1000000; ++i)
    v.push_back(d(rng));
  return v;
}

void checkExp() {
  const double bound = 1e-9;
  double worst = 0;
  for (double a : points(-745.5, 710.0, 10.0)) {
    double got = tofu_kg::vexp(a), want = std::exp(a);
    if (std::isinf(want)) {
      if (!std::isinf(got))
        fail("vexp", a, got, want);
    } else if (a < -708.0) {
      // 0 below -708, where the exact value is below 3.31e-308.
      if (got != 0 || !(want < 3.31e-308))
        fail("vexp", a, got, want);
    } else {
      checkRelative("vexp", a, got, want, bound, worst);
    }
  }
  const double inf = INFINITY;
  if (tofu_kg::vexp(-inf) != 0 || tofu_kg::vexp(inf) != inf ||
      !std::isnan(tofu_kg::vexp(NAN)) || tofu_kg::vexp(0.0) != 1.0 ||
      tofu_kg::vexp(709.78) == inf || tofu_kg::vexp(709.79) != inf)
    fail("vexp special", 0, 0, 0);
  std::printf("vexp: max relative error %.3g (bound %g)\n", worst, bound);
}

/// Sweeps an odd function's vector form `got` against the C library's
/// `want` over [-30, 30] and normal samples of deviation 2: within `bound`
/// relative, and a zero where the C library's is zero, of the same sign.
/// Returns the largest relative error.
double checkOddSweep(const char *what, double (*got)(double),
                     double (*want)(double), double bound) {
  double worst = 0;
  for (double a : points(-30.0, 30.0, 2.0)) {
    double g = got(a), w = want(a);
    if (w == 0) {
      if (g != 0 || std::signbit(g) != std::signbit(w))
        fail(what, a, g, w);
      continue;
    }
    checkRelative(what, a, g, w, bound, worst);
  }
  return worst;
}

void checkErf() {
  const double bound = 1e-8;
  double worst = checkOddSweep(
      "verf", tofu_kg::verf, [](double a) { return std::erf(a); }, bound);
  const double inf = INFINITY;
  if (tofu_kg::verf(inf) != 1.0 || tofu_kg::verf(-inf) != -1.0 ||
      !std::isnan(tofu_kg::verf(NAN)) || !std::signbit(tofu_kg::verf(-0.0)))
    fail("verf special", 0, 0, 0);
  std::printf("verf: max relative error %.3g (bound %g)\n", worst, bound);
}

void checkSigmoid() {
  const double bound = 1e-9;
  double worst = 0;
  for (double a : points(-700.0, 700.0, 10.0)) {
    double got = tofu_kg::tdl_Sigmoid(a), want = 1.0 / (1.0 + std::exp(-a));
    if (want < DBL_MIN)
      continue;
    checkRelative("tdl_Sigmoid", a, got, want, bound, worst);
  }
  std::printf("sigmoid: max relative error %.3g (bound %g)\n", worst, bound);
}

void checkTanh() {
  const double bound = 1e-9;
  double worst = checkOddSweep(
      "vtanh", tofu_kg::vtanh, [](double a) { return std::tanh(a); }, bound);
  // Both sides of the switch from the series to exp at |a| = 0.3, and
  // tiny values (the series' first term).
  for (double a : {0.3, std::nextafter(0.3, 0.0), -0.3, 1e-300, -1e-20, 5e-9})
    checkRelative("vtanh", a, tofu_kg::vtanh(a), std::tanh(a), bound, worst);
  const double inf = INFINITY;
  if (tofu_kg::vtanh(inf) != 1.0 || tofu_kg::vtanh(-inf) != -1.0 ||
      tofu_kg::vtanh(400.0) != 1.0 || !std::isnan(tofu_kg::vtanh(NAN)) ||
      !std::signbit(tofu_kg::vtanh(-0.0)))
    fail("vtanh special", 0, 0, 0);
  std::printf("vtanh: max relative error %.3g (bound %g)\n", worst, bound);
}

/// Distance in f32 ulps (same sign, finite).
std::int64_t ulps(float a, float b) {
  std::int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0)
    ia = INT32_MIN - ia;
  if (ib < 0)
    ib = INT32_MIN - ib;
  return std::llabs(std::int64_t(ia) - std::int64_t(ib));
}

void checkKernel() {
  const std::int64_t n = 4096, lo[1] = {0}, ext[1] = {n}, hi[1] = {n};
  std::vector<float> g(n), x(n), out(n);
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    g[i] = d(rng);
    x[i] = -10.0f + 20.0f * float(i) / float(n); // [-10, 10)
  }
  using tofu::runtime::BoxView;
  using tofu::runtime::ElementType;
  BoxView in[2] = {{ElementType::F32, 1, g.data(), lo, ext},
                   {ElementType::F32, 1, x.data(), lo, ext}};
  tofu::runtime::KernelCall call{in, 2,
                                 {ElementType::F32, 1, out.data(), lo, ext},
                                 lo, hi};
  tofu_k_gelu_backward(call);
  std::int64_t worst = 0, differ = 0, cancelled = 0;
  std::uint64_t hash = 1469598103934665603ull;
  for (std::int64_t i = 0; i < n; ++i) {
    double v = double(x[i]);
    double cdf = 0.5 * (1.0 + std::erf(v * 0.70710678118654757)),
           pdf = v * 0.3989422804014327 * std::exp(-0.5 * v * v);
    float want = float(double(g[i]) * (cdf + pdf));
    // One f32 ulp, or where the two terms cancel (near x = -0.75), 1e-8 of
    // their sizes (the formula's own condition, for the errors above), and
    // the rounding of 1 + erf in double (2^-53, both sides).
    double slack = std::ldexp(std::fabs(want), -23) +
                   1e-8 * std::fabs(g[i]) * (std::fabs(cdf) + std::fabs(pdf)) +
                   std::ldexp(std::fabs(g[i]), -52);
    differ += out[i] != want;
    if (std::fabs(double(out[i]) - double(want)) <= std::ldexp(std::fabs(want), -23))
      worst = std::max(worst, ulps(out[i], want));
    else
      ++cancelled;
    if (!(std::fabs(double(out[i]) - double(want)) <= slack))
      fail("gelu_backward", v, out[i], want);
    std::uint32_t bits;
    std::memcpy(&bits, &out[i], 4);
    hash = (hash ^ bits) * 1099511628211ull;
  }
  std::printf("gelu_backward: %" PRId64 " of %" PRId64
              " f32 results differ from the C library's: %" PRId64
              " by at most %" PRId64 " ulp, %" PRId64
              " more where the terms cancel\n",
              differ, n, differ - cancelled, worst, cancelled);
  std::printf("gelu_backward bits: %016" PRIx64 "\n", hash);
}
} // namespace

int main() {
  checkExp();
  checkErf();
  checkSigmoid();
  checkTanh();
  checkKernel();
  std::printf("%d failures\n", failures);
  return failures ? 1 : 0;
}
