//===- PolyTest.cpp - Tests of the symbolic polynomials -------------------===//

#include "tofu/Analysis/Poly.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::analysis;

namespace {

Poly x() { return Poly::atom(Atom::get(Atom::Kind::VarExtent, 0)); }
Poly k() { return Poly::atom(Atom::get(Atom::Kind::Param, 0)); }

std::string str(const Poly &p) {
  std::string s;
  llvm::raw_string_ostream os(s);
  p.print(os, [](Atom a) {
    return a.getKind() == Atom::Kind::Param ? std::string("k")
                                            : std::string("|x|");
  });
  return os.str();
}

TEST(RationalTest, FloorCeilAndNormalForm) {
  EXPECT_EQ(Rational(6, -4), Rational(-3, 2));
  EXPECT_EQ(Rational(-3, 2).floor(), -2);
  EXPECT_EQ(Rational(-3, 2).ceil(), -1);
  EXPECT_EQ(Rational(7, 2).floor(), 3);
  EXPECT_EQ(Rational(7, 2).ceil(), 4);
  EXPECT_EQ(Rational(1, 3) + Rational(1, 6), Rational(1, 2));
}

TEST(PolyTest, ArithmeticIsCanonical) {
  Poly a = x() / Rational(2) + Poly(Rational(3)) - Poly(Rational(1));
  EXPECT_EQ(str(a), "|x|/2 + 2");
  EXPECT_EQ(a + a, x() + Poly(Rational(4)));
  EXPECT_TRUE((a - a).isZero());
  EXPECT_EQ(str(k() * x() - k() + Poly(Rational(-1))), "k*|x| - k - 1");
  EXPECT_EQ(str(-(x() * Poly(Rational(3)))), "-3*|x|");
}

TEST(PolyTest, SignAssumesAtomsNonNegative) {
  EXPECT_EQ(Poly().getSign(), Sign::Zero);
  EXPECT_EQ((k() + Poly(Rational(1))).getSign(), Sign::NonNegative);
  EXPECT_EQ((-k()).getSign(), Sign::NonPositive);
  EXPECT_EQ((k() - Poly(Rational(1))).getSign(), Sign::Unknown);
}

TEST(PolyTest, Evaluates) {
  Poly p = k() * x() / Rational(2) + Poly(Rational(1));
  Rational v = p.evaluate([](Atom a) {
    return a.getKind() == Atom::Kind::Param ? int64_t(3) : int64_t(5);
  });
  EXPECT_EQ(v, Rational(17, 2));
}

} // namespace
