//===- Poly.cpp - Symbolic bounds: polynomials over extents and params ----===//
//
// This file implements Rational arithmetic and the canonical polynomial
// arithmetic of Poly, its evaluation and its printing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Poly.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <numeric>

using namespace tofu;
using namespace tofu::analysis;

//===----------------------------------------------------------------------===//
// Rational
//===----------------------------------------------------------------------===//

Rational::Rational(int64_t n, int64_t d) : num(n), den(d) {
  // INT64_MIN has no negation: treated as an overflow like any other.
  if (den == 0 || num == INT64_MIN || den == INT64_MIN) {
    num = 1;
    den = 0;
    return;
  }
  if (den < 0) {
    num = -num;
    den = -den;
  }
  int64_t g = std::gcd(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
}

int64_t Rational::floor() const {
  if (!isValid())
    return 0;
  int64_t q = num / den;
  return (num % den != 0 && num < 0) ? q - 1 : q;
}

int64_t Rational::ceil() const {
  if (!isValid())
    return 0;
  int64_t q = num / den;
  return (num % den != 0 && num > 0) ? q + 1 : q;
}

Rational Rational::operator+(Rational rhs) const {
  int64_t a, b, sum, den2;
  if (!isValid() || !rhs.isValid() || llvm::MulOverflow(num, rhs.den, a) ||
      llvm::MulOverflow(rhs.num, den, b) || llvm::AddOverflow(a, b, sum) ||
      llvm::MulOverflow(den, rhs.den, den2))
    return invalid();
  return Rational(sum, den2);
}

Rational Rational::operator-(Rational rhs) const {
  // A valid numerator is never INT64_MIN, so it negates.
  return *this + (rhs.isValid() ? Rational(-rhs.num, rhs.den) : invalid());
}

Rational Rational::operator*(Rational rhs) const {
  int64_t n, d;
  if (!isValid() || !rhs.isValid() || llvm::MulOverflow(num, rhs.num, n) ||
      llvm::MulOverflow(den, rhs.den, d))
    return invalid();
  return Rational(n, d);
}

Rational Rational::operator/(Rational rhs) const {
  int64_t n, d;
  if (!isValid() || !rhs.isValid() || llvm::MulOverflow(num, rhs.den, n) ||
      llvm::MulOverflow(den, rhs.num, d))
    return invalid();
  return Rational(n, d);
}

bool Rational::operator<(Rational rhs) const {
  // Both denominators are positive; the cross products fit in 128 bits.
  return __int128(num) * rhs.den < __int128(rhs.num) * den;
}

//===----------------------------------------------------------------------===//
// Poly
//===----------------------------------------------------------------------===//

Poly::Poly(Rational constant) {
  if (!constant.isZero())
    terms.push_back({Monomial(), constant});
}

Poly Poly::atom(Atom a) {
  Poly p;
  p.terms.push_back({Monomial{a}, Rational(1)});
  return p;
}

bool Poly::isConstant() const {
  return terms.empty() || (terms.size() == 1 && terms[0].monomial.empty());
}

Rational Poly::getConstant() const {
  for (const Term &t : terms)
    if (t.monomial.empty())
      return t.coef;
  return Rational(0);
}

bool Poly::isValid() const {
  return llvm::all_of(terms, [](const Term &t) { return t.coef.isValid(); });
}

bool Poly::hasIntegerCoefficients() const {
  return llvm::all_of(terms, [](const Term &t) { return t.coef.isInteger(); });
}

Sign Poly::getSign() const {
  if (terms.empty())
    return Sign::Zero;
  bool anyPos = false, anyNeg = false;
  for (const Term &t : terms)
    (t.coef.num > 0 ? anyPos : anyNeg) = true;
  if (anyPos && anyNeg)
    return Sign::Unknown;
  return anyPos ? Sign::NonNegative : Sign::NonPositive;
}

static bool monomialLess(const Poly::Monomial &a, const Poly::Monomial &b) {
  // Higher degree first so that the constant term prints last.
  if (a.size() != b.size())
    return a.size() > b.size();
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

void Poly::addTerm(const Monomial &m, Rational coef) {
  if (coef.isZero())
    return;
  auto it = llvm::lower_bound(terms, m, [](const Term &t, const Monomial &m) {
    return monomialLess(t.monomial, m);
  });
  if (it != terms.end() && it->monomial == m) {
    it->coef = it->coef + coef;
    if (it->coef.isZero())
      terms.erase(it);
    return;
  }
  terms.insert(it, {m, coef});
}

Poly Poly::operator+(const Poly &rhs) const {
  Poly result = *this;
  for (const Term &t : rhs.terms)
    result.addTerm(t.monomial, t.coef);
  return result;
}

Poly Poly::operator-() const {
  Poly result = *this;
  for (Term &t : result.terms)
    t.coef = Rational(-t.coef.num, t.coef.den);
  return result;
}

Poly Poly::operator-(const Poly &rhs) const { return *this + (-rhs); }

Poly Poly::operator*(const Poly &rhs) const {
  Poly result;
  for (const Term &a : terms)
    for (const Term &b : rhs.terms) {
      Monomial m = a.monomial;
      m.append(b.monomial.begin(), b.monomial.end());
      llvm::sort(m);
      result.addTerm(m, a.coef * b.coef);
    }
  return result;
}

Poly Poly::operator/(Rational divisor) const {
  Poly result = *this;
  for (Term &t : result.terms)
    t.coef = t.coef / divisor;
  return result;
}

bool Poly::operator==(const Poly &rhs) const {
  if (terms.size() != rhs.terms.size())
    return false;
  for (size_t i = 0; i != terms.size(); ++i)
    if (!(terms[i].monomial == rhs.terms[i].monomial) ||
        !(terms[i].coef == rhs.terms[i].coef))
      return false;
  return true;
}

Rational Poly::evaluate(llvm::function_ref<int64_t(Atom)> valueOf) const {
  Rational sum(0);
  for (const Term &t : terms) {
    Rational product = t.coef;
    for (Atom a : t.monomial)
      product = product * Rational(valueOf(a));
    sum = sum + product;
    if (!sum.isValid())
      break;
  }
  return sum;
}

void Poly::print(llvm::raw_ostream &os,
                 llvm::function_ref<std::string(Atom)> nameOf) const {
  if (terms.empty()) {
    os << '0';
    return;
  }
  bool first = true;
  for (const Term &t : terms) {
    int64_t num = t.coef.num;
    if (!first)
      os << (num < 0 ? " - " : " + ");
    else if (num < 0)
      os << '-';
    first = false;
    int64_t mag = num < 0 ? -num : num;
    if (t.monomial.empty()) {
      os << mag;
    } else {
      if (mag != 1)
        os << mag << '*';
      llvm::interleave(
          t.monomial, os, [&](Atom a) { os << nameOf(a); }, "*");
    }
    if (t.coef.den != 1)
      os << '/' << t.coef.den;
  }
}
