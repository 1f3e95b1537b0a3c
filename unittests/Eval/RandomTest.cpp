//===- RandomTest.cpp - Unit tests of TDL's random builtins ---------------===//
//
// The generator's code (Philox.def) against Random123's known answers for
// Philox-4x32-10, and the evaluator's rand_uniform / rand_normal against
// that code and the bit-level definition of docs/TDL.md ("Random
// builtins"): key (seed, stream), counter (n, step), the argument
// conversion of -1 to all ones, the 24-bit scalings.
//
//===----------------------------------------------------------------------===//

#include "TDL/TDLTestUtils.h"

#include "tofu/Eval/Evaluator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>

namespace philox_under_test {
#define TOFU_HD
#define TDL_PHILOX_SOURCE(...) __VA_ARGS__
#include "tofu/TDL/Philox.def"
#undef TOFU_HD
} // namespace philox_under_test

using namespace tofu;
using namespace tofu::eval;
using philox_under_test::tdlPhilox4x32;
using philox_under_test::TdlPhiloxBlock;

namespace {

void expectBlock(const TdlPhiloxBlock &b, std::uint32_t x0, std::uint32_t x1,
                 std::uint32_t x2, std::uint32_t x3) {
  EXPECT_EQ(b.x[0], x0);
  EXPECT_EQ(b.x[1], x1);
  EXPECT_EQ(b.x[2], x2);
  EXPECT_EQ(b.x[3], x3);
}

TEST(RandomTest, PhiloxKnownAnswers) {
  // Random123's kat_vectors for philox4x32_10.
  expectBlock(tdlPhilox4x32(0, 0, 0, 0, 0, 0), 0x6627e8d5, 0xe169c58d,
              0xbc57ac4c, 0x9b00dbd8);
  expectBlock(tdlPhilox4x32(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
                            0xffffffff, 0xffffffff),
              0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd);
  expectBlock(tdlPhilox4x32(0xa4093822, 0x299f31d0, 0x243f6a88, 0x85a308d3,
                            0x13198a2e, 0x03707344),
              0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1);
}

/// Evaluates `op r<seed, stream>(step) = lambda i < count: BUILTIN(seed,
/// stream, step[], i + offset)`.
Tensor draw(StringRef builtin, double seed, double stream, double step,
            int64_t count, int64_t offset = 0) {
  std::string source = "op r<seed, stream>(step) = lambda i < " +
                       std::to_string(count) + ": " + builtin.str() +
                       "(seed, stream, step[], i + " +
                       std::to_string(offset) + ");";
  tdl::ParsedSource parsed(source);
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  Tensor s(DType::F64, {});
  s.getData()[0] = step;
  llvm::Expected<Tensor> out =
      evaluate(parsed.op("r"), {&s}, {seed, stream}, {count}, DType::F64);
  if (!out) {
    ADD_FAILURE() << llvm::toString(out.takeError());
    return Tensor();
  }
  return std::move(*out);
}

double uniformOf(std::uint32_t x) { return double(x >> 8) / 16777216.0; }

TEST(RandomTest, UniformIsTheFirstWordOnA24BitGrid) {
  // Key 0, counter 0: Random123's first answer.
  Tensor zero = draw("rand_uniform", 0, 0, 0, 1);
  EXPECT_EQ(zero.getData()[0], uniformOf(0x6627e8d5));
  // -1 is all ones (two's complement): the second answer, for the step
  // and the element index; seed and stream are taken mod 2^32.
  Tensor ones = draw("rand_uniform", 4294967295.0, 4294967295.0, -1, 1, -1);
  EXPECT_EQ(ones.getData()[0], uniformOf(0x408f276d));
}

TEST(RandomTest, KeyIsSeedAndStreamCounterIsIndexAndStep) {
  const double seed = 20261207, stream = 3, step = 41.75; // floor: 41
  Tensor u = draw("rand_uniform", seed, stream, step, 8, 4294967294LL);
  Tensor z = draw("rand_normal", seed, stream, step, 8, 4294967294LL);
  for (int64_t i = 0; i != 8; ++i) {
    std::uint64_t n = 4294967294ULL + std::uint64_t(i); // crosses 2^32
    TdlPhiloxBlock b = tdlPhilox4x32(20261207, 3, std::uint32_t(n),
                                     std::uint32_t(n >> 32), 41, 0);
    EXPECT_EQ(u.getData()[i], uniformOf(b.x[0])) << "element " << i;
    double u1 = double((b.x[0] >> 8) + 1) / 16777216.0;
    double u2 = uniformOf(b.x[1]);
    EXPECT_EQ(z.getData()[i],
              std::sqrt(-2.0 * std::log(u1)) *
                  std::cos(6.283185307179586 * u2))
        << "element " << i;
  }
}

TEST(RandomTest, DrawsDependOnEveryKeyAndCounterPart) {
  double base = draw("rand_uniform", 1, 2, 3, 1).getData()[0];
  EXPECT_NE(draw("rand_uniform", 9, 2, 3, 1).getData()[0], base);
  EXPECT_NE(draw("rand_uniform", 1, 9, 3, 1).getData()[0], base);
  EXPECT_NE(draw("rand_uniform", 1, 2, 9, 1).getData()[0], base);
  EXPECT_NE(draw("rand_uniform", 1, 2, 3, 1, 9).getData()[0], base);
  EXPECT_EQ(draw("rand_uniform", 1, 2, 3, 1).getData()[0], base);
}

} // namespace
