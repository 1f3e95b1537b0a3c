//===- ShapeTest.cpp - Shape spelling and parsing -------------------------===//

#include "tofu/Support/Shape.h"

#include "gtest/gtest.h"

using namespace tofu;

namespace {

TEST(ShapeTest, RoundTripsItsSpelling) {
  Shape shape;
  ASSERT_TRUE(parseShape("4x6x20", shape));
  EXPECT_EQ(shape, Shape({4, 6, 20}));
  EXPECT_EQ(formatShape(shape), "4x6x20");
  EXPECT_EQ(getNumElements(shape), 480);
  ASSERT_TRUE(parseShape("scalar", shape));
  EXPECT_TRUE(shape.empty());
  EXPECT_EQ(formatShape(shape), "scalar");
}

TEST(ShapeTest, RejectsMalformedSpellings) {
  Shape shape;
  for (const char *bad : {"", "4x", "x4", "4x-1", "4y6", "4xx6", "99999999999999999999"})
    EXPECT_FALSE(parseShape(bad, shape)) << bad;
}

} // namespace
