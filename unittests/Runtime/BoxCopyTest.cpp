//===- BoxCopyTest.cpp - Region copies against element-by-element ones ----===//
//
// copyRegion, packRegion, unpackRegion and reduceRegion move each row that
// is contiguous in both boxes with one call, joining rows where the region
// spans the boxes' inner dimensions whole. Checks them against a copy of
// one element at a time on random boxes of ranks 1 to 4, many of whose
// regions span some inner dimensions whole in one box, both or neither.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Box.h"

#include "gtest/gtest.h"

#include <random>

using namespace tofu::runtime;
using std::int64_t;

namespace {

/// Row-major offset of `index` in `box`.
int64_t offsetIn(const Box &box, const std::vector<int64_t> &index) {
  int64_t at = 0;
  for (unsigned d = 0; d != box.getRank(); ++d)
    at = at * box.getExtent(d) + (index[d] - box.lo[d]);
  return at;
}

/// Calls fn(index) for every index of `region`, row-major.
template <typename Fn> void forEachIndex(const Box &region, Fn fn) {
  std::vector<int64_t> index = region.lo;
  for (;;) {
    fn(index);
    unsigned d = region.getRank();
    while (d-- > 0) {
      if (++index[d] < region.hi[d])
        break;
      index[d] = region.lo[d];
    }
    if (d == unsigned(-1))
      return;
  }
}

struct Case {
  Box region, src, dst;
};

/// A region and two boxes holding it: per dimension, each box either spans
/// the region exactly or reaches past it.
Case makeCase(std::mt19937 &random) {
  unsigned rank = 1 + random() % 4;
  Case c;
  for (Box *box : {&c.region, &c.src, &c.dst}) {
    box->lo.resize(rank);
    box->hi.resize(rank);
  }
  for (unsigned d = 0; d != rank; ++d) {
    c.region.lo[d] = random() % 3;
    c.region.hi[d] = c.region.lo[d] + 1 + random() % 4;
    for (Box *box : {&c.src, &c.dst}) {
      bool exact = random() % 2;
      box->lo[d] = exact ? c.region.lo[d] : c.region.lo[d] - random() % 2;
      box->hi[d] = exact ? c.region.hi[d] : c.region.hi[d] + 1 + random() % 2;
    }
  }
  return c;
}

std::vector<float> iota(int64_t n, float from) {
  std::vector<float> values(n);
  for (int64_t i = 0; i != n; ++i)
    values[i] = from + float(i);
  return values;
}

TEST(BoxCopyTest, RowsAgreeWithElementByElement) {
  std::mt19937 random(22);
  unsigned joined = 0;
  for (unsigned round = 0; round != 500; ++round) {
    Case c = makeCase(random);
    int64_t n = c.region.getVolume();
    std::vector<float> src = iota(c.src.getVolume(), 1);
    std::vector<float> before = iota(c.dst.getVolume(), 1000);
    std::vector<float> packed = iota(n, 5000);

    // The expected values, one element at a time.
    std::vector<float> copied = before, unpacked = before, reduced = before,
                       pack(n);
    int64_t i = 0;
    forEachIndex(c.region, [&](const std::vector<int64_t> &index) {
      int64_t s = offsetIn(c.src, index), d = offsetIn(c.dst, index);
      copied[d] = src[s];
      pack[i] = src[s];
      unpacked[d] = packed[i];
      reduced[d] += packed[i];
      ++i;
    });

    std::vector<float> out = before;
    copyRegion(c.region, src.data(), c.src, out.data(), c.dst, sizeof(float));
    EXPECT_EQ(out, copied) << "round " << round;
    std::vector<float> p(n);
    packRegion(c.region, src.data(), c.src, p.data(), sizeof(float));
    EXPECT_EQ(p, pack) << "round " << round;
    out = before;
    unpackRegion(c.region, packed.data(), out.data(), c.dst, sizeof(float));
    EXPECT_EQ(out, unpacked) << "round " << round;
    out = before;
    reduceRegion(Reducer::Sum, ElementType::F32, c.region, packed.data(),
                 out.data(), c.dst);
    EXPECT_EQ(out, reduced) << "round " << round;
    unsigned last = c.region.getRank() - 1;
    joined += c.region.getRank() > 1 &&
              c.src.getExtent(last) == c.region.getExtent(last) &&
              c.dst.getExtent(last) == c.region.getExtent(last);
  }
  // Many cases join rows.
  EXPECT_GT(joined, 50u);
}

} // namespace
