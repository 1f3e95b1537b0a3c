//===- CoverTest.cpp - checkBoxesCover on many boxes ----------------------===//
//
// The coverage check validatePlan applies to every tensor's stored boxes,
// with as many boxes as a large plan's workers (the map of cells each box
// marks, tofu/Runtime/Schedule.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Schedule.h"
#include "ErrorMessage.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace tofu::runtime;

namespace {

TEST(CoverTest, ManyBoxesNamesTheFirstHole) {
  // A 32 x 32 grid of 2 x 3 boxes (the last column 2 wide) covers a
  // [64, 94) tensor; so do replicas and boxes reaching past it. Without one
  // box, the first cell left out (row-major) is named.
  std::vector<std::int64_t> shape = {64, 94};
  std::vector<Box> grid;
  for (int64_t i = 0; i != 32; ++i)
    for (int64_t j = 0; j != 32; ++j)
      grid.push_back(Box{{2 * i, 3 * j}, {2 * i + 2, std::min<int64_t>(3 * j + 3, 94)}});
  std::vector<const Box *> boxes;
  for (const Box &b : grid)
    boxes.push_back(&b);
  EXPECT_EQ(getError([&] { checkBoxesCover("g", boxes, shape); }), "");
  Box whole{{0, 0}, {64, 94}}, past{{-4, -4}, {70, 100}};
  EXPECT_EQ(getError([&] { checkBoxesCover("r", {&whole, &whole}, shape); }),
            "");
  EXPECT_EQ(getError([&] { checkBoxesCover("p", {&past}, shape); }), "");
  boxes[5 * 32 + 7] = nullptr;
  boxes[9 * 32 + 1] = nullptr;
  EXPECT_EQ(getError([&] { checkBoxesCover("g", boxes, shape); }),
            "g leave [10,12)x[21,24) uncovered");
  // Each box twice in a row (workers replicating it), as checkBoxesCover
  // skips a box equal to the one before: dropping one copy leaves no hole;
  // one copy dropped and the other replaced by the box before them names
  // the hole.
  std::vector<const Box *> twice;
  for (const Box &b : grid)
    twice.insert(twice.end(), {&b, &b});
  twice[2 * (3 * 32 + 4)] = nullptr;
  EXPECT_EQ(getError([&] { checkBoxesCover("t", twice, shape); }), "");
  twice[2 * (3 * 32 + 4) + 1] = &grid[3 * 32 + 3];
  EXPECT_EQ(getError([&] { checkBoxesCover("t", twice, shape); }),
            "t leave [6,8)x[12,15) uncovered");
  // A scalar is covered by any box of rank 0, and by none without one.
  Box scalar{{}, {}};
  EXPECT_EQ(getError([&] { checkBoxesCover("s", {&scalar}, {}); }), "");
  EXPECT_EQ(getError([&] { checkBoxesCover("s", {nullptr}, {}); }),
            "s leave [] uncovered");
}

} // namespace
