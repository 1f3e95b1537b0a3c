//===- GemmEpilogueTest.cpp - The affine epilogues a GEMM can absorb ------===//
//
// Checks getAffineCoefficient, the normalisation of an element-wise body
// to X + c * t (t: its reads of the previous op's value) that lets a GEMM
// absorb its epilogue (emitEpilogueKernel): the forms composition yields
// match with the right c, and bodies that are not affine in t with a
// constant c do not.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/KernelEmitter.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/AST.h"
#include "tofu/TDL/Instantiate.h"

#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

using namespace tofu;

namespace {

const char *Specs = R"(
op sgd<lr: real, alpha: real>(w, t) = lambda ...i: w[...i] - alpha * (t[...i] * lr);
op scaled<c: real, d: real>(t) = lambda ...i: c * (t[...i] * d);
op negated(t) = lambda ...i: -t[...i];
op halved(t) = lambda ...i: t[...i] / 2.0;
op doubled(t) = lambda ...i: t[...i] + t[...i];
op shifted(x, t) = lambda ...i: (x[...i] + t[...i]) * 3.0 - x[...i];
op product(x, t) = lambda ...i: x[...i] * t[...i];
op square(t) = lambda ...i: t[...i] * t[...i];
op clamped(t) = lambda ...i: max(0.0, t[...i]);
op cancelled(t) = lambda ...i: t[...i] - t[...i];
op untouched(x, t) = lambda ...i: x[...i] * 2.0;
op divided(x, t) = lambda ...i: x[...i] / t[...i];
op byzero(t) = lambda ...i: t[...i] / 0.0;
)";

struct AffineFixture : public ::testing::Test {
  AffineFixture() : diags(srcMgr) {
    EXPECT_TRUE(specs.addSource(Specs, "specs.tdl", diags));
    EXPECT_TRUE(specs.check(diags));
  }
  /// getAffineCoefficient of op `type` over [4, 3] inputs, t its input at
  /// `slot`, with real params `params`.
  llvm::Optional<double>
  coefficient(StringRef type, unsigned numInputs, unsigned slot,
              std::vector<std::pair<std::string, double>> params = {}) {
    std::vector<Shape> shapes(numInputs, Shape{4, 3});
    SmallVector<tdl::NamedParamValue, 2> named;
    for (auto &[name, v] : params)
      named.emplace_back(name, tdl::ParamValue::ofReal(v));
    auto inst = specs.instantiate(type, shapes, named, 2);
    EXPECT_TRUE(bool(inst)) << type.str();
    if (!inst) {
      llvm::consumeError(inst.takeError());
      return llvm::None;
    }
    std::vector<double> values;
    for (const tdl::ParamValue &v : (*inst)->params)
      values.push_back(v.asReal());
    return codegen::getAffineCoefficient((*inst)->op->getBody(), {slot},
                                         values);
  }
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags;
  graph::SpecLibrary specs;
};

TEST_F(AffineFixture, AffineFormsMatch) {
  EXPECT_EQ(coefficient("sgd", 2, 1, {{"lr", 0.1}, {"alpha", 2.0}}),
            llvm::Optional<double>(-2.0 * 0.1));
  EXPECT_EQ(coefficient("scaled", 1, 0, {{"c", 3.0}, {"d", -0.5}}),
            llvm::Optional<double>(-1.5));
  EXPECT_EQ(coefficient("negated", 1, 0), llvm::Optional<double>(-1.0));
  EXPECT_EQ(coefficient("halved", 1, 0), llvm::Optional<double>(0.5));
  EXPECT_EQ(coefficient("doubled", 1, 0), llvm::Optional<double>(2.0));
  EXPECT_EQ(coefficient("shifted", 2, 1), llvm::Optional<double>(3.0));
}

TEST_F(AffineFixture, OtherFormsDoNotMatch) {
  // A tensor times t, t times t, a function of t, c = 0, no read of t,
  // t as a divisor, an infinite c.
  EXPECT_FALSE(coefficient("product", 2, 1));
  EXPECT_FALSE(coefficient("square", 1, 0));
  EXPECT_FALSE(coefficient("clamped", 1, 0));
  EXPECT_FALSE(coefficient("cancelled", 1, 0));
  EXPECT_FALSE(coefficient("untouched", 2, 1));
  EXPECT_FALSE(coefficient("divided", 2, 1));
  EXPECT_FALSE(coefficient("byzero", 1, 0));
  // `shifted` read at x's slot: (x + t) * 3 - x is affine in x too (c = 2).
  EXPECT_EQ(coefficient("shifted", 2, 0), llvm::Optional<double>(2.0));
}

} // namespace
