//===- IndexIntervals.h - The interval rule of an index ---------*- C++ -*-===//
//
// This file defines the one interval evaluation of a tensor index over an
// iteration box, which both the analysis (analysis::computeWorkerRegions,
// over a Binding's coefficient slots) and the runtime (runtime::OpRule, over
// the coefficients' values a compiled plan holds) instantiate: an index is
// a postfix program over closed intervals whose leaves are affine forms
// `c + sum a_v * v` (the interval of each is exact: the paper's <l, u, c>),
// with `+`, `-`, negation, a product by a constant, and `/` and `%` by a
// constant (conservative); clipping it to the dimension narrows a strided
// read to the values it takes and a `%` that wrapped once to what is left.
// Standard library only. Templates over what holds the program:
//
//   Leaf:    constant(), size(), var(i), coef(i)
//   Program: kind(), size(), op(i), k(i) (MulConst, Div, Rem), leaf(i)
//   Box:     lo(v), hi(v) (the half-open range of variable v)
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_INDEXINTERVALS_H
#define TOFU_RUNTIME_INDEXINTERVALS_H

#include <algorithm>
#include <cstdint>

namespace tofu {
namespace runtime {

/// One postfix instruction of an index (analysis::IndexInst's ops).
enum class IndexOp : std::uint8_t {
  /// Push the interval of an affine leaf.
  Affine,
  /// Pop two, push their sum / difference.
  Add,
  Sub,
  /// Negate the top.
  Neg,
  /// Multiply the top by a constant.
  MulConst,
  /// Floor-divide the top by, or take it modulo, a constant (the whole
  /// dimension if it is not positive).
  Div,
  Rem,
};

/// How an index is analysed (analysis::IndexProgram's kinds).
enum class IndexKind : std::uint8_t {
  /// One affine leaf: the interval is exact.
  Affine,
  /// Affine leaves under `/`, `%` by constants: conservative.
  DivMod,
  /// Data dependent or opaque: the whole dimension.
  Whole,
};

/// The most stack slots an index evaluation uses.
constexpr unsigned MaxIndexStack = 16;

namespace intervals {

/// Floor division and the matching modulo (b != 0), as TDL defines them.
inline std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline std::int64_t floorMod(std::int64_t a, std::int64_t b) {
  return a - floorDiv(a, b) * b;
}
inline std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return -floorDiv(-a, b);
}

/// Arithmetic with no checks: the caller knows every bound fits.
struct Unchecked {
  static constexpr bool checked = false;
  bool overflow = false;
  std::int64_t check(std::int64_t r, bool) { return r; }
  std::int64_t add(std::int64_t a, std::int64_t b) { return a + b; }
  std::int64_t sub(std::int64_t a, std::int64_t b) { return a - b; }
  std::int64_t mul(std::int64_t a, std::int64_t b) { return a * b; }
};

/// Arithmetic that records a result beyond ±Limit (or a wrap) in
/// `overflow`.
template <std::int64_t Limit> struct Checked {
  static constexpr bool checked = true;
  bool overflow = false;
  std::int64_t check(std::int64_t r, bool wrapped) {
    overflow |= wrapped || r > Limit || r < -Limit;
    return r;
  }
  std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    bool wrapped = __builtin_add_overflow(a, b, &r);
    return check(r, wrapped);
  }
  std::int64_t sub(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    bool wrapped = __builtin_sub_overflow(a, b, &r);
    return check(r, wrapped);
  }
  std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    bool wrapped = __builtin_mul_overflow(a, b, &r);
    return check(r, wrapped);
  }
};

/// The outcome of evaluating an index.
enum class Eval {
  /// The closed interval is in `lo`, `hi`.
  Ok,
  /// A variable of the index has an empty range: nothing is read.
  Empty,
  /// The index is the whole dimension.
  Whole,
  /// A bound went beyond the checked arithmetic's limit.
  Overflow,
};

/// The closed interval of an affine leaf over `box`; false if a variable
/// it uses has an empty range.
template <typename Arith, typename Leaf, typename Box>
bool evalAffine(const Leaf &leaf, const Box &box, Arith &arith,
                std::int64_t &lo, std::int64_t &hi) {
  lo = hi = arith.check(leaf.constant(), false);
  for (unsigned i = 0, e = leaf.size(); i != e; ++i) {
    unsigned v = leaf.var(i);
    if (box.lo(v) >= box.hi(v))
      return false;
    std::int64_t c = leaf.coef(i);
    std::int64_t a = arith.mul(c, box.lo(v)),
                 b = arith.mul(c, arith.sub(box.hi(v), 1));
    lo = arith.add(lo, std::min(a, b));
    hi = arith.add(hi, std::max(a, b));
  }
  return true;
}

/// Divides or reduces [lo, hi] by `k`; Whole if k is not positive.
inline Eval evalDivRem(bool isDiv, std::int64_t k, std::int64_t &lo,
                       std::int64_t &hi) {
  if (k <= 0)
    return Eval::Whole;
  std::int64_t qlo = floorDiv(lo, k), qhi = floorDiv(hi, k);
  if (isDiv) {
    lo = qlo;
    hi = qhi;
  } else if (qlo == qhi) {
    lo = floorMod(lo, k);
    hi = floorMod(hi, k);
  } else {
    lo = 0;
    hi = k - 1;
  }
  return Eval::Ok;
}

/// The closed interval `prog` takes over `box`. The program must be well
/// formed (each pop has its operands; at most MaxIndexStack deep).
template <typename Arith, typename Program, typename Box>
Eval evalIndex(const Program &prog, const Box &box, Arith &arith,
               std::int64_t &outLo, std::int64_t &outHi) {
  if (prog.kind() == IndexKind::Whole)
    return Eval::Whole;
  // Most indices are one affine leaf: no stack.
  if (prog.kind() == IndexKind::Affine) {
    if (!evalAffine(prog.leaf(0), box, arith, outLo, outHi))
      return Eval::Empty;
    return Arith::checked && arith.overflow ? Eval::Overflow : Eval::Ok;
  }
  std::int64_t lo[MaxIndexStack + 1], hi[MaxIndexStack + 1];
  unsigned sp = 0;
  for (unsigned i = 0, e = prog.size(); i != e; ++i) {
    switch (prog.op(i)) {
    case IndexOp::Affine:
      if (!evalAffine(prog.leaf(i), box, arith, lo[sp], hi[sp]))
        return Eval::Empty;
      ++sp;
      break;
    case IndexOp::Add:
      --sp;
      lo[sp - 1] = arith.add(lo[sp - 1], lo[sp]);
      hi[sp - 1] = arith.add(hi[sp - 1], hi[sp]);
      break;
    case IndexOp::Sub: {
      --sp;
      std::int64_t l = arith.sub(lo[sp - 1], hi[sp]);
      hi[sp - 1] = arith.sub(hi[sp - 1], lo[sp]);
      lo[sp - 1] = l;
      break;
    }
    case IndexOp::Neg:
      // Bounds stay within the limit, so negation cannot wrap.
      std::swap(lo[sp - 1], hi[sp - 1]);
      lo[sp - 1] = -lo[sp - 1];
      hi[sp - 1] = -hi[sp - 1];
      break;
    case IndexOp::MulConst: {
      std::int64_t k = prog.k(i);
      std::int64_t a = arith.mul(k, lo[sp - 1]), b = arith.mul(k, hi[sp - 1]);
      lo[sp - 1] = std::min(a, b);
      hi[sp - 1] = std::max(a, b);
      break;
    }
    case IndexOp::Div:
    case IndexOp::Rem:
      if (evalDivRem(prog.op(i) == IndexOp::Div, prog.k(i), lo[sp - 1],
                     hi[sp - 1]) == Eval::Whole)
        return Eval::Whole;
      arith.check(hi[sp - 1], false);
      break;
    }
    if (Arith::checked && arith.overflow)
      return Eval::Overflow;
  }
  outLo = lo[0];
  outHi = hi[0];
  return Eval::Ok;
}

/// Narrows [lo, hi], the clipped interval of a strided affine leaf, to the
/// first and last values the leaf really takes within it. The leaf takes
/// `c * y + t` for y over one variable's range and t over the sum of the
/// others' ranges; when every other coefficient is -1, 0 or 1 the t are
/// contiguous, and the values are runs of t's width every |c|, so the
/// extreme values within [lo, hi] are found exactly. With two or more
/// coefficients beyond ±1 the interval is left as it is (a bounding box
/// still, not the tightest). Returns false if no value lies in [lo, hi].
template <typename Leaf, typename Box>
bool tightenStrided(const Leaf &leaf, const Box &box, std::int64_t &lo,
                    std::int64_t &hi) {
  std::int64_t c = 0, yLo = 0, yHi = 0;
  std::int64_t tLo = leaf.constant(), tHi = tLo;
  for (unsigned i = 0, e = leaf.size(); i != e; ++i) {
    std::int64_t k = leaf.coef(i);
    std::int64_t rLo = box.lo(leaf.var(i)), rHi = box.hi(leaf.var(i));
    if (k > 1 || k < -1) {
      if (c != 0)
        return true;
      // Over y' = -y a negative coefficient becomes positive.
      c = k < 0 ? -k : k;
      yLo = k < 0 ? 1 - rHi : rLo;
      yHi = k < 0 ? -rLo : rHi - 1;
      continue;
    }
    std::int64_t a = k * rLo, b = k * (rHi - 1);
    tLo += std::min(a, b);
    tHi += std::max(a, b);
  }
  if (c == 0 || tHi - tLo + 1 >= c)
    return true; // The values are contiguous.
  // The last y whose run starts at or below hi, and the first whose run
  // ends at or above lo.
  std::int64_t top = std::min(yHi, floorDiv(hi - tLo, c));
  std::int64_t bottom = std::max(yLo, ceilDiv(lo - tHi, c));
  if (top < yLo || bottom > yHi)
    return false;
  std::int64_t newHi = std::min(c * top + tHi, hi);
  std::int64_t newLo = std::max(c * bottom + tLo, lo);
  if (newLo > newHi)
    return false;
  lo = newLo;
  hi = newHi;
  return true;
}

/// Narrows the upper bound `hi` of the clipped interval of `(affine) % k`
/// whose values wrapped around k once: they are [a mod k, k) and
/// [0, b mod k] for the affine interval [a, b], and [0, k - 1] is their
/// hull, but within a dimension shorter than k the first part may be
/// clipped away entirely. Exact when the affine values are contiguous (unit
/// coefficients), a bounding box otherwise.
template <typename Program, typename Box>
void tightenWrappedRem(const Program &prog, const Box &box,
                       std::int64_t dimExtent, std::int64_t &hi) {
  if (prog.size() != 2 || prog.op(0) != IndexOp::Affine ||
      prog.op(1) != IndexOp::Rem)
    return;
  std::int64_t k = prog.k(1);
  Unchecked arith;
  std::int64_t a, b;
  if (k <= 0 || !evalAffine(prog.leaf(0), box, arith, a, b) ||
      floorDiv(a, k) + 1 != floorDiv(b, k))
    return;
  hi = floorMod(a, k) <= dimExtent - 1
           ? std::min(k - 1, dimExtent - 1)
           : std::min(floorMod(b, k), dimExtent - 1);
}

/// The range [outLo, outHi) of a dimension of `dimExtent` that `prog`
/// reads over `box`: its interval clipped to the dimension (reads outside
/// are zero padding), narrowed to the values a strided read, or a `%` that
/// wraps, really takes there. Returns false if it reads nothing. The
/// arithmetic is unchecked: every bound must fit (Binding's check).
template <typename Program, typename Box>
bool clipIndex(const Program &prog, const Box &box, std::int64_t dimExtent,
               std::int64_t &outLo, std::int64_t &outHi) {
  std::int64_t lo, hi;
  Unchecked arith;
  switch (evalIndex(prog, box, arith, lo, hi)) {
  case Eval::Empty:
  case Eval::Overflow:
    return false;
  case Eval::Whole:
    outLo = 0;
    outHi = dimExtent;
    return dimExtent > 0;
  case Eval::Ok:
    break;
  }
  std::int64_t clippedLo = std::max<std::int64_t>(lo, 0);
  std::int64_t clippedHi = std::min(hi, dimExtent - 1);
  if (clippedLo > clippedHi)
    return false;
  if (clippedLo != lo || clippedHi != hi) {
    if (prog.kind() != IndexKind::Affine)
      tightenWrappedRem(prog, box, dimExtent, clippedHi);
    else if (!tightenStrided(prog.leaf(0), box, clippedLo, clippedHi))
      return false;
  }
  outLo = clippedLo;
  outHi = clippedHi + 1;
  return true;
}

} // namespace intervals
} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_INDEXINTERVALS_H
