//===- WorkerParts.h - Every worker's nested even part of a box -*- C++ -*-===//
//
// This file declares forEachWorkerPart, the one walk over every worker of a
// plan's levels that both a tensor's stored regions (plan::
// forEachStoredRegion, from its layout) and an op's iteration boxes
// (planner::forEachOpShare, from its steps) are derived by: at each level a
// box is either split on one dimension into even parts (analysis::
// getEvenPart), the worker's digit at that level choosing the part, or left
// whole. Walking the workers in order, only the levels inside the highest
// digit that changed are derived again (about two parts per worker instead
// of one per level).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLAN_WORKERPARTS_H
#define TOFU_PLAN_WORKERPARTS_H

#include "tofu/Plan/Plan.h"

namespace tofu {
namespace plan {

/// Calls `fn(w, part)` for every worker `w` of `levels` in worker order,
/// `part` (a `Box`, valid during the call only) being `whole` with, for
/// each level l from the outermost, dimension `splitDim(l)` replaced by its
/// even part number `digits[l]` of `levels[l]` (getWorkerDigits); a level
/// whose `splitDim(l)` is not a dimension of `whole` (e.g. ~0u) leaves the
/// box as it was. The same parts as deriving each worker's from scratch.
template <typename Box, typename SplitDimFn, typename Fn>
void forEachWorkerPart(const Box &whole, ArrayRef<unsigned> levels,
                       SplitDimFn splitDim, Fn fn) {
  unsigned numLevels = levels.size(), workers = getNumWorkers(levels);
  // prefix[l]: the part after levels 0..l-1 for the current digits.
  SmallVector<Box, 8> prefix(numLevels + 1);
  prefix[0] = whole;
  SmallVector<unsigned, 8> digits(numLevels, 0);
  auto derive = [&](unsigned from) {
    for (unsigned l = from; l != numLevels; ++l) {
      prefix[l + 1] = prefix[l];
      unsigned d = splitDim(l);
      if (d < prefix[l].size())
        prefix[l + 1][d] =
            analysis::getEvenPart(prefix[l][d], levels[l], digits[l]);
    }
  };
  derive(0);
  for (unsigned w = 0; w != workers; ++w) {
    if (w)
      derive(nextWorkerDigits(levels, digits));
    fn(w, static_cast<const Box &>(prefix[numLevels]));
  }
}

} // namespace plan
} // namespace tofu

#endif // TOFU_PLAN_WORKERPARTS_H
