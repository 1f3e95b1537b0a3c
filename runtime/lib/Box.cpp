//===- Box.cpp - Boxes of tensors and copies between them -----------------===//
//
// This file implements Box arithmetic, the grid of cells the schedule cuts
// boxes into, and copies and reductions between dense row-major boxes.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Box.h"
#include "tofu/Runtime/Half.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

using namespace tofu::runtime;
using std::int64_t;

std::vector<int64_t> Box::getExtents() const {
  std::vector<int64_t> extents(getRank());
  for (unsigned d = 0, e = getRank(); d != e; ++d)
    extents[d] = getExtent(d);
  return extents;
}

int64_t Box::getVolume() const {
  int64_t volume = 1;
  for (unsigned d = 0, e = getRank(); d != e; ++d)
    volume *= getExtent(d);
  return volume;
}

bool Box::contains(const Box &inner) const {
  if (inner.isEmpty())
    return true;
  for (unsigned d = 0, e = getRank(); d != e; ++d)
    if (inner.lo[d] < lo[d] || inner.hi[d] > hi[d])
      return false;
  return true;
}

Box Box::whole(const std::vector<int64_t> &shape) {
  return Box{std::vector<int64_t>(shape.size(), 0), shape};
}

std::string Box::format() const {
  if (lo.empty())
    return "[]";
  std::string s;
  for (unsigned d = 0, e = getRank(); d != e; ++d) {
    if (d)
      s += "x";
    s += fmt::format("[{},{})", lo[d], hi[d]);
  }
  return s;
}

Box tofu::runtime::intersect(const Box &a, const Box &b) {
  Box r = a;
  for (unsigned d = 0, e = a.getRank(); d != e; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

void tofu::runtime::forEachCell(const Box &target,
                                const std::vector<const Box *> &cuts,
                                const std::function<void(const Box &)> &fn) {
  if (target.isEmpty())
    return;
  unsigned rank = target.getRank();
  std::vector<std::vector<int64_t>> bounds(rank);
  for (unsigned d = 0; d != rank; ++d) {
    std::vector<int64_t> &b = bounds[d];
    b = {target.lo[d], target.hi[d]};
    for (const Box *cut : cuts) {
      if (!cut || cut->isEmpty())
        continue;
      for (int64_t v : {cut->lo[d], cut->hi[d]})
        if (v > target.lo[d] && v < target.hi[d])
          b.push_back(v);
    }
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
  }
  std::vector<size_t> at(rank, 0);
  Box cell = target;
  for (;;) {
    for (unsigned d = 0; d != rank; ++d) {
      cell.lo[d] = bounds[d][at[d]];
      cell.hi[d] = bounds[d][at[d] + 1];
    }
    fn(cell);
    unsigned d = rank;
    while (d-- > 0) {
      if (++at[d] + 1 < bounds[d].size())
        break;
      at[d] = 0;
    }
    if (d == unsigned(-1))
      return;
  }
}

unsigned tofu::runtime::getElementSize(ElementType type) {
  switch (type) {
  case ElementType::F32: return 4;
  case ElementType::F64: return 8;
  case ElementType::I64: return 8;
  case ElementType::I32: return 4;
  case ElementType::I8: return 1;
  case ElementType::Bool: return 1;
  case ElementType::F16: return 2;
  case ElementType::BF16: return 2;
  }
  return 1;
}

const char *tofu::runtime::getElementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32: return "f32";
  case ElementType::F64: return "f64";
  case ElementType::I64: return "i64";
  case ElementType::I32: return "i32";
  case ElementType::I8: return "i8";
  case ElementType::Bool: return "bool";
  case ElementType::F16: return "f16";
  case ElementType::BF16: return "bf16";
  }
  return "?";
}

namespace {

/// Row-major strides in elements of a dense box.
std::vector<int64_t> getStrides(const Box &box) {
  std::vector<int64_t> strides(box.getRank(), 1);
  for (unsigned d = box.getRank(); d-- > 1;)
    strides[d - 1] = strides[d] * box.getExtent(d);
  return strides;
}

/// Element offset of `region`'s first element in the dense box `box`.
int64_t getOffset(const Box &region, const Box &box,
                  const std::vector<int64_t> &strides) {
  int64_t offset = 0;
  for (unsigned d = 0, e = box.getRank(); d != e; ++d)
    offset += (region.lo[d] - box.lo[d]) * strides[d];
  return offset;
}

/// Calls `fn(srcOffset, dstOffset, count)` for every run of `region`'s
/// elements that is contiguous in both boxes `a` and `b` (either may be
/// null: packed, consecutive rows), in elements: an innermost row, joined
/// with the rows after it while the region spans the inner dimensions of
/// both boxes whole (a 4 x 4 region of two 8 x 4 boxes is one run of 16,
/// not four of 4).
template <typename Fn>
void forEachRow(const Box &region, const Box *a, const Box *b, Fn fn) {
  if (region.isEmpty())
    return;
  unsigned rank = region.getRank();
  if (rank == 0) {
    fn(0, 0, 1);
    return;
  }
  std::vector<int64_t> sa = a ? getStrides(*a) : getStrides(region);
  std::vector<int64_t> sb = b ? getStrides(*b) : getStrides(region);
  int64_t oa = a ? getOffset(region, *a, sa) : 0;
  int64_t ob = b ? getOffset(region, *b, sb) : 0;
  // Dimensions [outer, rank) make one run: each but the first of them is
  // spanned whole in both boxes.
  auto whole = [&](unsigned d) {
    return (!a || a->getExtent(d) == region.getExtent(d)) &&
           (!b || b->getExtent(d) == region.getExtent(d));
  };
  unsigned outer = rank - 1;
  int64_t row = region.getExtent(outer);
  while (outer > 0 && whole(outer)) {
    --outer;
    row *= region.getExtent(outer);
  }
  std::vector<int64_t> at(outer, 0);
  for (;;) {
    int64_t pa = oa, pb = ob;
    for (unsigned d = 0; d != outer; ++d) {
      pa += at[d] * sa[d];
      pb += at[d] * sb[d];
    }
    fn(pa, pb, row);
    unsigned d = outer;
    while (d-- > 0) {
      if (++at[d] < region.getExtent(d))
        break;
      at[d] = 0;
    }
    if (d == unsigned(-1))
      return;
  }
}

} // namespace

void tofu::runtime::copyRegion(const Box &region, const void *src,
                               const Box &srcBox, void *dst, const Box &dstBox,
                               unsigned size) {
  assert(srcBox.contains(region) && dstBox.contains(region));
  forEachRow(region, &srcBox, &dstBox, [&](int64_t s, int64_t d, int64_t n) {
    std::memcpy(static_cast<char *>(dst) + d * size,
                static_cast<const char *>(src) + s * size, n * size);
  });
}

void tofu::runtime::packRegion(const Box &region, const void *src,
                               const Box &srcBox, void *dst, unsigned size) {
  assert(srcBox.contains(region));
  forEachRow(region, &srcBox, nullptr, [&](int64_t s, int64_t d, int64_t n) {
    std::memcpy(static_cast<char *>(dst) + d * size,
                static_cast<const char *>(src) + s * size, n * size);
  });
}

void tofu::runtime::unpackRegion(const Box &region, const void *src, void *dst,
                                 const Box &dstBox, unsigned size) {
  assert(dstBox.contains(region));
  forEachRow(region, nullptr, &dstBox, [&](int64_t s, int64_t d, int64_t n) {
    std::memcpy(static_cast<char *>(dst) + d * size,
                static_cast<const char *>(src) + s * size, n * size);
  });
}

namespace {

template <typename T> T combine(Reducer reducer, T a, T b) {
  switch (reducer) {
  case Reducer::Sum: return T(a + b);
  case Reducer::Prod: return T(a * b);
  case Reducer::Max: return (a > b || a != a) ? a : b;
  case Reducer::Min: return (a < b || a != a) ? a : b;
  }
  return a;
}

template <typename T>
void reduceTyped(Reducer reducer, const Box &region, const void *src,
                 void *dst, const Box &dstBox) {
  const T *in = static_cast<const T *>(src);
  T *out = static_cast<T *>(dst);
  forEachRow(region, nullptr, &dstBox, [&](int64_t s, int64_t d, int64_t n) {
    for (int64_t i = 0; i != n; ++i)
      out[d + i] = combine(reducer, out[d + i], in[s + i]);
  });
}

} // namespace

void tofu::runtime::reduceRegion(Reducer reducer, ElementType type,
                                 const Box &region, const void *src, void *dst,
                                 const Box &dstBox) {
  switch (type) {
  case ElementType::F32:
    return reduceTyped<float>(reducer, region, src, dst, dstBox);
  case ElementType::F64:
    return reduceTyped<double>(reducer, region, src, dst, dstBox);
  case ElementType::I64:
    return reduceTyped<std::int64_t>(reducer, region, src, dst, dstBox);
  case ElementType::I32:
    return reduceTyped<std::int32_t>(reducer, region, src, dst, dstBox);
  case ElementType::I8:
  case ElementType::Bool:
    return reduceTyped<std::int8_t>(reducer, region, src, dst, dstBox);
  case ElementType::F16: // combined in float, rounded when stored
    return reduceTyped<F16>(reducer, region, src, dst, dstBox);
  case ElementType::BF16:
    return reduceTyped<BF16>(reducer, region, src, dst, dstBox);
  }
}
