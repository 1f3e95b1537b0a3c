//===- MathHelpers.cpp - The kernel prelude's numeric builtins ------------===//
//
// This file implements getMathHelpers (MathHelpers.h): the `tdl_<Id>`
// helpers of the kernel prelude, one per numeric builtin of
// MathBuiltins.def, with the expression the evaluator computes, except that
// in a C++ (not CUDA) unit exp, erf and tanh are the prelude's branch-free
// `vexp`, `verf` and `vtanh` instead of the C library's calls
// (docs/CodeGen.md, "Vectorized exp and erf"). The C library's functions
// are calls the compiler cannot vectorize; the v forms are straight-line
// double arithmetic and selects, so loops over them vectorize (with
// -fno-trapping-math, KernelCompiler's flags), and kernels that call them
// are compiled twice, for AVX2 and for the baseline, one chosen when the
// library loads (target_clones; the same operations in the same order,
// without contracted multiply-adds, so both give the same bits).
//
// Accuracy against the C library's double results (test/CodeGen/
// vector-math.test, 2e6 points each, bounds checked there): vexp within
// 1e-9 relative (measured 2.7e-10) from -708 up, 0 below; sigmoid within
// 1e-9; verf within 1e-8 (measured 4.1e-9); vtanh within 1e-9 (measured
// 2.2e-10). All are far below half an ulp of a float (6e-8): an f32
// result is the C library's or its neighbour, except where the kernel's
// own formula cancels (gelu's gradient near x = -0.75 sums two terms of
// opposite signs).
//
//===----------------------------------------------------------------------===//

#include "MathHelpers.h"

using namespace tofu;

namespace {
/// A numeric builtin of MathBuiltins.def: its name, parameters and C++
/// expression.
struct Builtin {
  const char *id;
  const char *params;
  const char *expr;
};

const Builtin builtins[] = {
#define TDL_MATH_PARAMS_1 "double a"
#define TDL_MATH_PARAMS_2 "double a, double b"
#define TDL_MATH_PARAMS_4 "double a, double b, double c, double d"
#define TDL_MATH_BUILTIN(Id, Arity, Expr) {#Id, TDL_MATH_PARAMS_##Arity, #Expr},
#include "tofu/TDL/MathBuiltins.def"
#undef TDL_MATH_PARAMS_1
#undef TDL_MATH_PARAMS_2
#undef TDL_MATH_PARAMS_4
};

/// The Philox generator of rand_uniform and rand_normal: the text the
/// evaluator compiles (Philox.def).
const char *philoxSource =
#define TDL_PHILOX_SOURCE(...) #__VA_ARGS__
#include "tofu/TDL/Philox.def"
    ;

/// `s` with every `from` replaced by `to`.
std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The vector forms and the macros that pick them (inside namespace
// tofu_kg). vexp: a = n ln2 + r with n = round(a / ln2) (the 1.5 * 2^52
// shift rounds to nearest and leaves n in the low bits), |r| <= ln2 / 2,
// exp(r) by its Taylor polynomial of degree 8 (relative error < 1e-9),
// times 2^(n-1) built in the exponent field, times 2. a < -708 gives 0
// (the exact value is a subnormal double, 0 as a float), a above
// ln(DBL_MAX) infinity, NaN stays NaN: selects on a at the end, which
// replace whatever the exponent field made of a out of range (no clamp of
// a before: the same bits, 7% less time). verf: for |a| < 0.5 the Taylor
// series of erf to a^13 (relative error < 1e-9); above, 1 - erfc(|a|) with
// erfc(z) = exp(-z^2) P(t), t = 1 / (1 + 0.4 z), P a degree-9 polynomial
// fitted to erfc(z) exp(z^2) on [0.5, 26.5] (relative error 5.4e-9); the
// sign of a copied onto the result. vtanh: for |a| < 0.3 the Taylor series
// of tanh to a^13 (the next term below 1e-10 relative); above,
// 1 - 2 / (exp(2|a|) + 1) (1 once vexp gives infinity); the sign of a
// copied onto the result.
const char *vectorForms = R"(// exp, erf and tanh: the C library's in a CUDA unit (TOFU_KG_CUDA_UNIT
// or nvcc), else branch-free double arithmetic a loop vectorizes
// (docs/CodeGen.md, "Vectorized exp and erf").
#if defined(__CUDACC__) || defined(TOFU_KG_CUDA_UNIT)
#define TOFU_KG_EXP std::exp
#define TOFU_KG_ERF std::erf
#define TOFU_KG_TANH std::tanh
#define TOFU_KG_WIDE
#else
inline double vexp(double a) {
  const double shift = 6755399441055744.0; // 1.5 * 2^52
  double kd = a * 1.4426950408889634 + shift;
  double n = kd - shift;
  double r = (a - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  double p = 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  std::uint64_t bits;
  __builtin_memcpy(&bits, &kd, sizeof bits);
  bits = (bits << 52) + (std::uint64_t(1022) << 52); // 2^(n-1)
  double scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  double e = (p * scale) * 2.0;
  e = a < -708.0 ? 0.0 : e;
  return a > 709.782712893384 ? inf : e;
}
inline double verf(double a) {
  double z = std::fabs(a);
  double t = 1.0 / (1.0 + 0.4 * z);
  double q = 0.06086109452375916;
  q = q * t - 0.22363808795144885;
  q = q * t + 0.23442220800218086;
  q = q * t - 0.06242884059170486;
  q = q * t + 0.1706186474223399;
  q = q * t + 0.1594742967018629;
  q = q * t + 0.20952654391204334;
  q = q * t + 0.2254904757201905;
  q = q * t + 0.2256858447815989;
  q = q * t - 2.280180510377816e-07;
  double big = 1.0 - q * vexp(-(z * z));
  double z2 = z * z;
  double s = 1.0 / 9360.0;
  s = s * z2 - 1.0 / 1320.0;
  s = s * z2 + 1.0 / 216.0;
  s = s * z2 - 1.0 / 42.0;
  s = s * z2 + 0.1;
  s = s * z2 - 1.0 / 3.0;
  s = s * z2 + 1.0;
  double small = 1.1283791670955126 * z * s;
  return std::copysign(z < 0.5 ? small : big, a);
}
inline double vtanh(double a) {
  double z = std::fabs(a);
  double big = 1.0 - 2.0 / (vexp(2.0 * z) + 1.0);
  double z2 = z * z;
  double s = 21844.0 / 6081075.0;
  s = s * z2 - 1382.0 / 155925.0;
  s = s * z2 + 62.0 / 2835.0;
  s = s * z2 - 17.0 / 315.0;
  s = s * z2 + 2.0 / 15.0;
  s = s * z2 - 1.0 / 3.0;
  s = s * z2 + 1.0;
  double small = z * s;
  return std::copysign(z < 0.3 ? small : big, a);
}
#define TOFU_KG_EXP tofu_kg::vexp
#define TOFU_KG_ERF tofu_kg::verf
#define TOFU_KG_TANH tofu_kg::vtanh
// A kernel that calls them: an AVX2 and a baseline copy, picked at load
// (-DTOFU_KG_WIDE= on the command line: the baseline only).
#if !defined(TOFU_KG_WIDE) && defined(__x86_64__) && defined(__GNUC__) && \
    defined(__has_attribute)
#if __has_attribute(target_clones)
#define TOFU_KG_WIDE __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef TOFU_KG_WIDE
#define TOFU_KG_WIDE
#endif
#endif
)";
} // namespace

std::string codegen::getMathHelpers() {
  std::string text = vectorForms;
  text += "// Philox-4x32-10, the random builtins' generator (Philox.def).\n";
  text += philoxSource;
  text += "\n";
  text += "// The numeric builtins, from the table the evaluator computes "
          "them by.\n";
  for (const Builtin &b : builtins) {
    std::string expr = replaceAll(b.expr, "std::exp(", "TOFU_KG_EXP(");
    expr = replaceAll(expr, "std::erf(", "TOFU_KG_ERF(");
    expr = replaceAll(expr, "std::tanh(", "TOFU_KG_TANH(");
    text += std::string("TOFU_HD inline double tdl_") + b.id + "(" +
            b.params + ") { return " + expr + "; }\n";
  }
  return text;
}

bool codegen::callsVectorForms(const std::string &body) {
  for (const char *name :
       {"tdl_Exp(", "tdl_Erf(", "tdl_Sigmoid(", "tdl_Tanh("})
    if (body.find(name) != std::string::npos)
      return true;
  return false;
}
