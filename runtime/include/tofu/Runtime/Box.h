//===- Box.h - Boxes of tensors and copies between them ---------*- C++ -*-===//
//
// This file declares Box, a half-open range per dimension of a tensor, and
// the element-level helpers the schedule and the executor share: element
// sizes, copying a sub-box between two dense boxes, and combining partial
// values with a reducer. Standard library only.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_BOX_H
#define TOFU_RUNTIME_BOX_H

#include "tofu/Runtime/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// A half-open range [lo[d], hi[d]) per dimension; empty if any is.
struct Box {
  std::vector<std::int64_t> lo, hi;

  unsigned getRank() const { return lo.size(); }
  std::int64_t getExtent(unsigned d) const {
    return hi[d] > lo[d] ? hi[d] - lo[d] : 0;
  }
  std::vector<std::int64_t> getExtents() const;
  /// Elements in the box (1 for rank 0).
  std::int64_t getVolume() const;
  bool isEmpty() const { return getVolume() == 0; }
  /// True if `inner` lies within this box (an empty `inner` always does).
  bool contains(const Box &inner) const;
  bool operator==(const Box &rhs) const {
    return lo == rhs.lo && hi == rhs.hi;
  }
  /// The whole of a tensor of `shape`.
  static Box whole(const std::vector<std::int64_t> &shape);
  /// "[0,4)x[0,8)".
  std::string format() const;
};

/// The intersection of two boxes of one rank (possibly empty).
Box intersect(const Box &a, const Box &b);

/// Calls `fn` on every non-empty cell of the grid that cuts `target` at the
/// boundaries of `cuts` (each clipped to `target`): every cell then lies
/// either within or outside each cut box. Cells come in row-major order.
void forEachCell(const Box &target, const std::vector<const Box *> &cuts,
                 const std::function<void(const Box &)> &fn);

/// Bytes of one element.
unsigned getElementSize(ElementType type);
/// "f32", "i64", ...
const char *getElementTypeName(ElementType type);

/// Copies the elements of `region` from the dense box `srcBox` at `src` to
/// the dense box `dstBox` at `dst`; `region` lies within both.
void copyRegion(const Box &region, const void *src, const Box &srcBox,
                void *dst, const Box &dstBox, unsigned elementSize);
/// Packs `region` of the dense box at `src` into consecutive bytes at `dst`.
void packRegion(const Box &region, const void *src, const Box &srcBox,
                void *dst, unsigned elementSize);
/// Unpacks consecutive bytes at `src` into `region` of the box at `dst`.
void unpackRegion(const Box &region, const void *src, void *dst,
                  const Box &dstBox, unsigned elementSize);

/// How partial values of a `reduce` share combine.
enum class Reducer : std::uint8_t { Sum, Prod, Max, Min };

/// Combines the packed values at `src` into `region` of the box at `dst`.
void reduceRegion(Reducer reducer, ElementType type, const Box &region,
                  const void *src, void *dst, const Box &dstBox);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_BOX_H
