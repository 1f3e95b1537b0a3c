//===- Layout.cpp - Stored regions from per-level layouts -----------------===//
//
// This file implements the derivation of a worker's stored region from a
// tensor's per-level layout (tofu/Analysis/Layout.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Layout.h"

#include <cassert>

using namespace tofu;
using namespace tofu::analysis;

void analysis::getLayoutRegion(ArrayRef<int64_t> shape,
                               ArrayRef<unsigned> levels,
                               ArrayRef<uint8_t> dims,
                               ArrayRef<unsigned> digits, Region &region) {
  assert(dims.size() <= levels.size() && dims.size() <= digits.size());
  region.resize(shape.size());
  for (unsigned d = 0, e = shape.size(); d != e; ++d)
    region[d] = Range{0, shape[d]};
  for (unsigned l = 0, e = dims.size(); l != e; ++l)
    if (dims[l] < shape.size())
      region[dims[l]] = getEvenPart(region[dims[l]], levels[l], digits[l]);
}

void analysis::getLayoutRegion(ArrayRef<int64_t> shape,
                               ArrayRef<unsigned> levels,
                               ArrayRef<uint8_t> dims, unsigned worker,
                               Region &region) {
  SmallVector<unsigned, 8> digits(levels.size());
  for (unsigned l = levels.size(); l-- != 0;) {
    digits[l] = worker % levels[l];
    worker /= levels[l];
  }
  getLayoutRegion(shape, levels, dims, digits, region);
}
