//===- Tolerance.h - --check's default tolerance per dtype ------*- C++ -*-===//
//
// --check passes when |a - b| <= T * (1 + |b|) for every checked element.
// Without --tolerance, T follows the least precise floating-point dtype of
// the graph's tensors: a partitioned run rounds partial sums and fetched
// boxes to that dtype at other points than the unpartitioned one, so their
// values may differ by a few of its units in the last place, and the
// fp32 outputs computed from them by as much (docs/Runtime.md, "16-bit
// tensors").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_TOLERANCE_H
#define TOFU_TOOLS_TOFU_RUN_TOLERANCE_H

#include "tofu/Graph/Graph.h"

#include <algorithm>

namespace tofu {

/// f32/f64 graphs: 1e-4. With bf16 tensors (8 significant bits, a unit in
/// the last place of 2^-8 = 3.9e-3): 3e-2. With f16 tensors (11 bits, 2^-11
/// = 4.9e-4): 4e-3.
inline double getDefaultTolerance(const graph::Graph &g) {
  double tolerance = 1e-4;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    DType dtype = g.getTensor(t).dtype;
    if (dtype == DType::BF16)
      tolerance = std::max(tolerance, 3e-2);
    else if (dtype == DType::F16)
      tolerance = std::max(tolerance, 4e-3);
  }
  return tolerance;
}

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_TOLERANCE_H
