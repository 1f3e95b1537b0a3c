//===- BuiltBoxes.h - PlanBoxes over a built plan ---------------*- C++ -*-===//
//
// This file defines BuiltBoxes, the runtime unit tests' PlanBoxes over an
// ExecutablePlan that holds every box, so that predictPeaks' PlanBoxes
// form can be compared with its form over a built schedule.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_RUNTIME_BUILTBOXES_H
#define TOFU_UNITTESTS_RUNTIME_BUILTBOXES_H

#include "tofu/Runtime/StepMemory.h"

namespace tofu {
namespace runtime {
namespace test {

/// PlanBoxes over a built plan.
class BuiltBoxes : public PlanBoxes {
public:
  explicit BuiltBoxes(const ExecutablePlan &plan) : plan(plan) {}
  void getStored(unsigned t, std::vector<std::optional<Box>> &out) override {
    out = plan.tensors[t].stored;
  }
  const std::vector<OpShare> &getShares(unsigned i) override {
    return plan.ops[i].workers;
  }

private:
  const ExecutablePlan &plan;
};

} // namespace test
} // namespace runtime
} // namespace tofu

#endif // TOFU_UNITTESTS_RUNTIME_BUILTBOXES_H
