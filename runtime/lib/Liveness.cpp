//===- Liveness.cpp - When a worker holds each tensor in a step -----------===//
//
// This file implements the plan's liveness (Liveness.h): each tensor's
// last reader or writer, once per plan.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Liveness.h"

#include <algorithm>

using namespace tofu::runtime;

std::vector<int> tofu::runtime::computeLastUse(const ExecutablePlan &plan) {
  std::vector<int> lastUse(plan.tensors.size(), -1);
  for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
    for (unsigned t : plan.ops[i].inputs)
      lastUse[t] = std::max(lastUse[t], int(i));
    lastUse[plan.ops[i].output] = std::max(lastUse[plan.ops[i].output], int(i));
  }
  return lastUse;
}

Liveness::Liveness(const ExecutablePlan &plan) : lastUse(computeLastUse(plan)) {
  persistent.reserve(plan.tensors.size());
  for (const TensorInfo &t : plan.tensors)
    persistent.push_back(t.persistent);
}
