//===- GeneratedPlan.cpp - Plans compiled into a training binary ----------===//
//
// This file implements the rebuilding of an ExecutablePlan from the tables
// `tofu-plan --emit=cpp` generates, and LinkedPlan, which runs one.
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

LinkedPlan::LinkedPlan(const GeneratedPlan &generated,
                       std::chrono::milliseconds timeout)
    : generated(generated), plan(buildExecutablePlan(generated)),
      kernels(std::vector<KernelInfo>(generated.kernels,
                                      generated.kernels +
                                          generated.numKernels)),
      transport(createThreadTransport(plan.workers, timeout)),
      executor(std::make_unique<Executor>(plan, kernels, *transport)) {}

LinkedPlan::~LinkedPlan() = default;

unsigned LinkedPlan::getTensor(const std::string &name) const {
  int t = lookupTensor(generated, name);
  if (t < 0)
    throw RuntimeError("the plan of '" + std::string(generated.graphName) +
                       "' has no tensor '" + name + "'");
  return t;
}

unsigned LinkedPlan::getLoss() const {
  int loss = -1;
  for (unsigned t = 0; t != generated.numTensors; ++t) {
    const GeneratedTensor &row = generated.tensors[t];
    if (std::strcmp(row.role, "output") != 0 || row.rank != 0 ||
        (row.type != ElementType::F32 && row.type != ElementType::F64))
      continue;
    if (loss >= 0)
      throw RuntimeError("the graph has several scalar outputs: '" +
                         std::string(generated.tensors[loss].name) +
                         "' and '" + row.name + "'");
    loss = t;
  }
  if (loss < 0)
    throw RuntimeError("the graph has no scalar floating-point output");
  return loss;
}

std::vector<unsigned>
LinkedPlan::getTensorsOfRole(const std::string &role) const {
  std::vector<unsigned> result;
  for (unsigned t = 0; t != generated.numTensors; ++t)
    if (role == generated.tensors[t].role)
      result.push_back(t);
  return result;
}

void LinkedPlan::setRaw(unsigned tensor, ElementType type, const void *data,
                        std::size_t count) {
  const TensorInfo &info = plan.tensors[tensor];
  if (info.type != type)
    throw RuntimeError("tensor '" + info.name + "' is " +
                       getElementTypeName(info.type) + ", not " +
                       getElementTypeName(type));
  if (std::int64_t(count) != info.getNumElements())
    throw RuntimeError(fmt::format("tensor '{}' has {} elements, got {}",
                                   info.name, info.getNumElements(), count));
  HostTensor value;
  value.type = type;
  value.shape = info.shape;
  value.data.resize(count * getElementSize(type));
  std::memcpy(value.data.data(), data, value.data.size());
  executor->setInput(tensor, value);
}

void LinkedPlan::setInput(const std::string &name,
                          const std::vector<float> &values) {
  setRaw(getTensor(name), ElementType::F32, values.data(), values.size());
}

void LinkedPlan::setInput(const std::string &name,
                          const std::vector<std::int64_t> &values) {
  setRaw(getTensor(name), ElementType::I64, values.data(), values.size());
}

std::vector<float> LinkedPlan::gatherFloats(const std::string &name) const {
  HostTensor value = executor->gather(getTensor(name));
  if (value.type != ElementType::F32)
    throw RuntimeError("tensor '" + name + "' is not f32");
  std::vector<float> result(value.data.size() / sizeof(float));
  std::memcpy(result.data(), value.data.data(), value.data.size());
  return result;
}

double LinkedPlan::getLossValue() const {
  HostTensor value = executor->gather(getLoss());
  if (value.type == ElementType::F64) {
    double loss;
    std::memcpy(&loss, value.data.data(), sizeof loss);
    return loss;
  }
  float loss;
  std::memcpy(&loss, value.data.data(), sizeof loss);
  return loss;
}
