//===- Layout.h - Stored regions from per-level layouts ---------*- C++ -*-===//
//
// This file declares the one derivation of a worker's stored region of a
// tensor from the tensor's compact layout: one step per level of the worker
// hierarchy, each splitting one dimension by the level's factor (the even
// split, getEvenPart) or replicating. The planner, the cost model, plan
// readers and the runtime's lowering all derive regions through it, so a
// plan written as layouts (docs/PlanFormat.md, "Compact layouts") and one
// written as per-worker regions mean the same thing.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_LAYOUT_H
#define TOFU_ANALYSIS_LAYOUT_H

#include "tofu/Analysis/Regions.h"

namespace tofu {
namespace analysis {

/// Worker `digits`'s stored region of a tensor of `shape` under the layout
/// `dims`: one entry per level of `levels` (outermost first), the dimension
/// that level splits, or any value >= the rank to replicate at that level.
/// Every dimension starts as its full range; each level keeps part
/// `digits[l]` of `levels[l]` of the dimension it splits (getEvenPart), so a
/// dimension split at several levels is split in nested parts.
void getLayoutRegion(ArrayRef<int64_t> shape, ArrayRef<unsigned> levels,
                     ArrayRef<uint8_t> dims, ArrayRef<unsigned> digits,
                     Region &region);

/// The same for worker number `worker` (level 1 the most significant digit:
/// `w = ((c1 * f2 + c2) * f3 + c3) ...`).
void getLayoutRegion(ArrayRef<int64_t> shape, ArrayRef<unsigned> levels,
                     ArrayRef<uint8_t> dims, unsigned worker, Region &region);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_LAYOUT_H
