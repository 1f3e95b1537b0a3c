//===- Shape.h - Concrete tensor shapes -------------------------*- C++ -*-===//
//
// This file declares Shape, the concrete extents of a tensor, shared by the
// analysis, the graph IR and the tools, and its `D0xD1x...` spelling used
// on command lines (`--shape data=4x6x20`). A rank-0 tensor has the empty
// shape, spelled "scalar".
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_SHAPE_H
#define TOFU_SUPPORT_SHAPE_H

#include "tofu/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace tofu {

/// The extents of a tensor, outermost dimension first.
using Shape = SmallVector<int64_t, 4>;

/// Number of elements of a tensor of this shape (1 for a scalar).
int64_t getNumElements(ArrayRef<int64_t> shape);

/// Spells a shape as `4x6x20`, or "scalar" for rank 0.
std::string formatShape(ArrayRef<int64_t> shape);

/// Parses `4x6x20` (or "scalar") into `shape`. Every extent must be a
/// non-negative integer. Returns false on malformed input.
bool parseShape(StringRef text, Shape &shape);

} // namespace tofu

#endif // TOFU_SUPPORT_SHAPE_H
