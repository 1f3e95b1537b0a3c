//===- ExprPrinterTest.cpp - printExpr keeps meaning with few parens ------===//

#include "TDLTestUtils.h"

#include "tofu/TDL/Printers.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::tdl;

namespace {

std::string printBody(StringRef body) {
  ParsedSource src(("op f(A) = lambda i: " + body + ";").str(),
                   /*runSema=*/false);
  EXPECT_TRUE(src.errors.empty()) << body.str();
  if (!src.errors.empty())
    return "";
  return exprToString(src.op("f").getBody());
}

TEST(ExprPrinterTest, DropsRedundantParentheses) {
  EXPECT_EQ(printBody("(a - b) - c"), "a - b - c");
  EXPECT_EQ(printBody("((A[i]))"), "A[i]");
  EXPECT_EQ(printBody("(a * b) + c"), "a * b + c");
}

TEST(ExprPrinterTest, KeepsNeededParentheses) {
  EXPECT_EQ(printBody("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(printBody("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(printBody("-(a + b)"), "-(a + b)");
  EXPECT_EQ(printBody("a / (b * c)"), "a / (b * c)");
}

TEST(ExprPrinterTest, PrintsLiteralsSoTheyReadBack) {
  EXPECT_EQ(printBody("0.5 * 1e-5"), "0.5 * 1e-05");
  EXPECT_EQ(printBody("2.0 + 3"), "2.0 + 3");
  EXPECT_EQ(printBody("0.79788456"), "0.79788456");
}

TEST(ExprPrinterTest, RoundTripsThroughTheParser) {
  for (StringRef body :
       {"Sum(lambda k < 2, j: A[i, k] * (A[k, j] - 1))",
        "select(A[i] > 0 && !(A[i] < 3) || i == 2, exp(A[i]), -A[i])",
        "Max(lambda k: A[i * 2 + k % 3, (k + 1) / 2])"}) {
    std::string once = printBody(body);
    EXPECT_EQ(printBody(once), once);
  }
}

} // namespace
