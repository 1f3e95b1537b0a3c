//===- OperatorFilterTest.cpp - Tests for tdl::keepOperators --------------===//

#include "tofu/TDL/OperatorFilter.h"

#include "gtest/gtest.h"

using namespace tofu;

namespace {

std::string keepOnly(StringRef source, StringRef name, bool &keptAny) {
  return tdl::keepOperators(
      source, [&](StringRef op) { return op == name; }, keptAny);
}

TEST(OperatorFilterTest, BlanksOtherDefinitionsKeepingLines) {
  std::string source = "# a; comment\n"
                       "op relu(x) = lambda ...i: max(x[...i], 0.0);\n"
                       "op neg(x) =\n  lambda ...i: -x[...i]; # after; it\n"
                       "op relu(x) where rank(x) == 0 = lambda: x[];\n";
  bool keptAny = false;
  std::string kept = keepOnly(source, "relu", keptAny);
  EXPECT_TRUE(keptAny);
  ASSERT_EQ(kept.size(), source.size());
  EXPECT_EQ(kept, "# a; comment\n"
                  "op relu(x) = lambda ...i: max(x[...i], 0.0);\n"
                  "           \n" + std::string(25, ' ') + "# after; it\n" +
                  "op relu(x) where rank(x) == 0 = lambda: x[];\n");
}

TEST(OperatorFilterTest, ReportsWhenNothingIsKept) {
  bool keptAny = true;
  std::string source = "op neg(x) = lambda ...i: -x[...i];\n";
  std::string kept = keepOnly(source, "relu", keptAny);
  EXPECT_FALSE(keptAny);
  EXPECT_EQ(kept, std::string(source.size() - 1, ' ') + "\n");
}

TEST(OperatorFilterTest, LeavesTextThatIsNotADefinitionForTheParser) {
  bool keptAny = true;
  // A stray word, then a definition without its `;`: both stay as written
  // so the parser reports them where they are.
  std::string stray = "op neg(x) = lambda ...i: -x[...i];\nbad op relu(x) =";
  std::string kept = keepOnly(stray, "relu", keptAny);
  EXPECT_EQ(kept.substr(kept.find('\n')), stray.substr(stray.find('\n')));
  std::string unterminated = "op neg(x) = lambda ...i: -x[...i]";
  EXPECT_EQ(keepOnly(unterminated, "relu", keptAny), unterminated);
}

} // namespace
