//===- Liveness.h - When a worker holds each tensor in a step ---*- C++ -*-===//
//
// This file declares the liveness of a plan's tensors, the one rule by
// which both executors (Executor.h, DeviceExecutor.h), the peak prediction
// (StepMemory.h), the fusion rule (Fusion.h), the in-place rule
// (InPlaceUpdates.h) and the planner's step estimate release and keep
// stored boxes: a worker's stored box of a tensor is released after the
// tensor's last reader or writer, unless the tensor persists through the
// step (parameters, state, outputs, next values, tensors no op reads:
// TensorInfo::persistent); a stored box is kept from one step to the next
// only for the persistent graph inputs (parameters and state). Liveness
// depends on the plan's ops alone, so an executor computes it once, when
// it is built, and every step reads it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_LIVENESS_H
#define TOFU_RUNTIME_LIVENESS_H

#include "tofu/Runtime/ExecutablePlan.h"

#include <vector>

namespace tofu {
namespace runtime {

/// Per tensor of `plan`, the index of the last op reading or writing it
/// (-1: none).
std::vector<int> computeLastUse(const ExecutablePlan &plan);

/// Whether a worker keeps its box of `t` from one step to the next: only
/// persistent graph inputs (parameters and state); everything else is
/// released when a step starts.
inline bool isHeldAcrossSteps(const TensorInfo &t) {
  return t.graphInput && t.persistent;
}

/// The liveness of one plan's tensors, computed once.
class Liveness {
public:
  explicit Liveness(const ExecutablePlan &plan);

  /// Per tensor, the index of the last op reading or writing it (-1: none):
  /// computeLastUse's.
  const std::vector<int> &getLastUse() const { return lastUse; }
  int getLastUse(unsigned t) const { return lastUse[t]; }

  /// Whether a worker releases its stored box of tensor `t` once op `i`,
  /// which reads or writes it, is done: op i is its last reader or writer
  /// and it does not persist through the step.
  bool isReleasedAfter(unsigned t, unsigned i) const {
    return lastUse[t] <= int(i) && !persistent[t];
  }

private:
  std::vector<int> lastUse;
  std::vector<bool> persistent;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_LIVENESS_H
