//===- Half.h - 16-bit floating-point storage types -------------*- C++ -*-===//
//
// The runtime stores f16 (IEEE binary16) and bf16 (bfloat16) tensors as
// 16-bit patterns and computes on them in float or double. A value is
// rounded when it is stored: to the nearest float first (as PyTorch's
// kernels compute in float), then to the nearest 16-bit value, ties to even;
// overflow gives infinity and NaN stays NaN. Generated kernels, the
// evaluator backend and the runtime's partial-sum reductions all convert
// through these functions, so they round alike (docs/Runtime.md,
// "16-bit tensors").
//
// The functions are marked TOFU_HD so that a CUDA unit can call them on the
// device (tofu/Runtime/DeviceKernel.h defines it); elsewhere it is empty.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_HALF_H
#define TOFU_RUNTIME_HALF_H

#include <cstdint>
#include <cstring>

#ifndef TOFU_HD
#define TOFU_HD
#endif

namespace tofu {
namespace runtime {
namespace half {

TOFU_HD inline std::uint32_t floatBits(float f) {
  std::uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

TOFU_HD inline float bitsFloat(std::uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/// bfloat16: the upper half of a float, rounded to nearest even.
TOFU_HD inline std::uint16_t floatToBF16(float f) {
  std::uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
    return std::uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}

TOFU_HD inline float bf16ToFloat(std::uint16_t h) {
  return bitsFloat(std::uint32_t(h) << 16);
}

/// IEEE binary16 (1 sign, 5 exponent, 10 mantissa bits), rounded to
/// nearest even, with subnormals; beyond 65504 (after rounding) infinity.
TOFU_HD inline std::uint16_t floatToF16(float f) {
  std::uint32_t u = floatBits(f);
  std::uint16_t sign = std::uint16_t((u >> 16) & 0x8000u);
  std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return std::uint16_t(sign | 0x7e00u);
  if (a >= 0x477ff000u) // rounds to 65520 or more (or is infinite)
    return std::uint16_t(sign | 0x7c00u);
  if (a < 0x38800000u) { // below the smallest normal half, 2^-14
    if (a < 0x33000000u) // at most half the smallest subnormal, 2^-25
      return sign;
    // The subnormal's mantissa: the float's significand shifted right.
    std::uint32_t exp = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
    unsigned shift = 126u - exp; // from 14 to 24
    std::uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1u),
                  halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (h & 1u)))
      ++h;
    return std::uint16_t(sign | h);
  }
  // Normal: rebias the exponent (127 -> 15) and round off 13 bits.
  std::uint32_t h = ((a - 0x38000000u) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  return std::uint16_t(sign | h);
}

TOFU_HD inline float f16ToFloat(std::uint16_t h) {
  std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu) // infinity or NaN
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) { // zero or subnormal: mant * 2^-24
    float v = float(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

} // namespace half

/// A bf16 element: 16 bits in memory, float in arithmetic.
struct BF16 {
  std::uint16_t bits;
  BF16() = default;
  TOFU_HD BF16(double v) : bits(half::floatToBF16(float(v))) {}
  TOFU_HD operator float() const { return half::bf16ToFloat(bits); }
};

/// An f16 element: 16 bits in memory, float in arithmetic.
struct F16 {
  std::uint16_t bits;
  F16() = default;
  TOFU_HD F16(double v) : bits(half::floatToF16(float(v))) {}
  TOFU_HD operator float() const { return half::f16ToFloat(bits); }
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_HALF_H
