//===- Poly.h - Symbolic bounds: polynomials over extents and params -*- C++ -*-===//
//
// This file declares Poly, the symbolic number of the interval analysis: a
// sum of rational multiples of monomials over atoms. Atoms are the params
// of an operator, the extents of its index variables (the paper's X_i; a
// reduction variable's extent is an atom too), the extents of its input
// tensors' dimensions, and "opaque" constant expressions over params that
// are not polynomials (`k / 2`). The paper's interval <l, u, c> is a pair
// of Polys of degree one in the extents; a param may appear as a
// coefficient (`stride * |y|`), which is why the representation is a
// polynomial and not a plain affine vector. Rationals give the paper's
// `X / 2`.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_POLY_H
#define TOFU_ANALYSIS_POLY_H

#include "tofu/Support/LLVM.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tofu {
namespace analysis {

/// An exact rational number num/den with den > 0, in lowest terms, or the
/// invalid value (den == 0) that arithmetic which would overflow int64_t
/// gives instead; invalid operands give invalid results.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  Rational() = default;
  Rational(int64_t value)
      : num(value == INT64_MIN ? 1 : value), den(value == INT64_MIN ? 0 : 1) {}
  Rational(int64_t num, int64_t den);
  static Rational invalid() { return Rational(1, 0); }

  bool isValid() const { return den != 0; }
  bool isZero() const { return num == 0 && den != 0; }
  bool isInteger() const { return den == 1; }
  /// The largest integer not greater than the value (0 if invalid).
  int64_t floor() const;
  /// The smallest integer not less than the value (0 if invalid).
  int64_t ceil() const;

  Rational operator+(Rational rhs) const;
  Rational operator-(Rational rhs) const;
  Rational operator*(Rational rhs) const;
  /// Division; by zero gives the invalid value.
  Rational operator/(Rational rhs) const;
  bool operator==(Rational rhs) const { return num == rhs.num && den == rhs.den; }
  bool operator<(Rational rhs) const;
};

/// A symbol of a Poly, packed into 32 bits: a kind and up to two indices.
class Atom {
public:
  enum class Kind : uint8_t {
    /// The value of param `a`.
    Param,
    /// The extent of index variable `a` (by IndexVarDecl id).
    VarExtent,
    /// The extent of dimension `b` of tensor `a` (by position).
    TensorDim,
    /// The value of opaque constant expression `a` of the analysis.
    Opaque,
  };

  static Atom get(Kind kind, unsigned a, unsigned b = 0) {
    return Atom(uint32_t(kind) << 28 | (a & 0x3fff) << 14 | (b & 0x3fff));
  }
  Kind getKind() const { return Kind(bits >> 28); }
  unsigned getA() const { return (bits >> 14) & 0x3fff; }
  unsigned getB() const { return bits & 0x3fff; }
  uint32_t getBits() const { return bits; }
  bool operator==(Atom rhs) const { return bits == rhs.bits; }
  bool operator<(Atom rhs) const { return bits < rhs.bits; }

private:
  explicit Atom(uint32_t bits) : bits(bits) {}
  uint32_t bits;
};

/// The sign of a Poly when every atom is assumed non-negative.
enum class Sign { Zero, NonNegative, NonPositive, Unknown };

/// A polynomial with rational coefficients over Atoms, kept canonical
/// (terms sorted by monomial, no zero coefficients) so that equal
/// polynomials compare equal.
class Poly {
public:
  /// A product of atoms, sorted; empty for the constant term.
  using Monomial = SmallVector<Atom, 2>;
  struct Term {
    Monomial monomial;
    Rational coef;
  };

  Poly() = default;
  Poly(Rational constant);
  static Poly atom(Atom a);

  ArrayRef<Term> getTerms() const { return terms; }
  bool isZero() const { return terms.empty(); }
  /// True if the polynomial has no atom; then getConstant() is its value.
  bool isConstant() const;
  Rational getConstant() const;
  /// False if some coefficient overflowed int64_t while it was computed.
  bool isValid() const;
  /// True if every coefficient is an integer.
  bool hasIntegerCoefficients() const;
  /// The sign, assuming every atom is non-negative (extents are; params are
  /// assumed to be when a symbolic region is printed).
  Sign getSign() const;

  Poly operator+(const Poly &rhs) const;
  Poly operator-(const Poly &rhs) const;
  Poly operator-() const;
  Poly operator*(const Poly &rhs) const;
  /// Division by a non-zero rational.
  Poly operator/(Rational divisor) const;
  bool operator==(const Poly &rhs) const;
  bool operator!=(const Poly &rhs) const { return !(*this == rhs); }

  /// The value with each atom replaced by `valueOf(atom)`; invalid if it,
  /// or a step towards it, overflows int64_t.
  Rational evaluate(llvm::function_ref<int64_t(Atom)> valueOf) const;

  /// Prints the polynomial, e.g. `|x|/2 + |dx| - 1`, naming atoms with
  /// `nameOf`.
  void print(llvm::raw_ostream &os,
             llvm::function_ref<std::string(Atom)> nameOf) const;

private:
  void addTerm(const Monomial &m, Rational coef);
  SmallVector<Term, 2> terms;
};

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_POLY_H
