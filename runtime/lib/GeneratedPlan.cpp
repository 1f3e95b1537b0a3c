//===- GeneratedPlan.cpp - Plans compiled into a training binary ----------===//
//
// This file implements the rebuilding of an ExecutablePlan from the tables
// `tofu-plan --emit=cpp` generates (LinkedPlan.cpp runs one).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/GeneratedPlan.h"

#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

#include <cstring>

using namespace tofu;
using namespace tofu::runtime;

static Box decodeBox(GeneratedBox box) {
  if (!box)
    throw RuntimeError("generated plan: a box is missing");
  Box result;
  std::int64_t rank = box[0];
  result.lo.assign(box + 1, box + 1 + rank);
  result.hi.assign(box + 1 + rank, box + 1 + 2 * rank);
  return result;
}

ExecutablePlan runtime::buildExecutablePlan(const GeneratedPlan &generated) {
  ExecutablePlan plan;
  plan.workers = generated.workers;
  plan.commBytes = generated.commBytes;
  plan.peakBytesPerWorker.assign(generated.peakBytesPerWorker,
                                 generated.peakBytesPerWorker +
                                     generated.workers);
  for (unsigned t = 0; t != generated.numTensors; ++t) {
    const GeneratedTensor &row = generated.tensors[t];
    TensorInfo tensor;
    tensor.name = row.name;
    tensor.type = row.type;
    tensor.shape.assign(row.shape, row.shape + row.rank);
    tensor.graphInput = row.graphInput;
    tensor.persistent = row.persistent;
    tensor.updates = row.updates;
    for (unsigned w = 0; w != generated.workers; ++w)
      tensor.stored.push_back(row.stored[w] ? std::optional<Box>(
                                                  decodeBox(row.stored[w]))
                                            : std::nullopt);
    plan.tensors.push_back(std::move(tensor));
  }
  for (unsigned i = 0; i != generated.numOps; ++i) {
    const GeneratedOp &row = generated.ops[i];
    OpInfo op;
    op.name = row.name;
    op.type = row.type;
    op.inputs.assign(row.inputs, row.inputs + row.numInputs);
    op.output = row.output;
    op.kernel = row.kernel;
    op.partial = row.partial;
    op.reducer = row.reducer;
    if (row.pointwise)
      op.pointwise.assign(row.pointwise, row.pointwise + row.numInputs);
    for (unsigned w = 0; w != generated.workers; ++w) {
      const GeneratedShare &share = row.workers[w];
      OpShare result;
      result.iteration = decodeBox(share.iteration);
      for (unsigned j = 0; j != row.numInputs; ++j)
        result.inputs.push_back(decodeBox(share.inputs[j]));
      result.output = decodeBox(share.output);
      op.workers.push_back(std::move(result));
    }
    plan.ops.push_back(std::move(op));
  }
  validatePlan(plan);
  return plan;
}

int runtime::lookupTensor(const GeneratedPlan &generated,
                          const std::string &name) {
  for (unsigned t = 0; t != generated.numTensors; ++t)
    if (name == generated.tensors[t].name)
      return t;
  return -1;
}
