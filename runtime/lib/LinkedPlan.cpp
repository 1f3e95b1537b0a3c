//===- LinkedPlan.cpp - Run a compiled plan in a training program ---------===//
//
// This file implements LinkedPlan: the executor of a generated plan on the
// transport and backend of LinkOptions, and its tensors by name, whole or
// per shard.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/LinkedPlan.h"

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/MemoryCheck.h"

#include <fmt/format.h>

#include <cstring>

using namespace tofu;
using namespace tofu::runtime;

/// The executor `options` ask for over `transport`.
static std::unique_ptr<StepExecutor>
createExecutor(const ExecutablePlan &plan, KernelTable &kernels,
               LinkOptions &options, Transport &transport) {
  if (!options.device)
    return std::make_unique<Executor>(plan, kernels, transport);
  if (!options.communicator)
    throw RuntimeError("LinkOptions: a device needs its communicator");
  return std::make_unique<DeviceExecutor>(plan, *options.device,
                                          *options.communicator, &transport);
}

/// `options` with its transport: the thread transport of `workers` when it
/// has none.
static LinkOptions withTransport(LinkOptions options, unsigned workers) {
  if (!options.transport)
    options.transport = createThreadTransport(workers, options.timeout);
  return options;
}

/// The worker `transport` runs alone in this process, or -1; throws
/// RuntimeError when it does not run the plan's workers.
static int getOnlyLocalWorker(const Transport &transport,
                              const GeneratedPlan &generated) {
  if (transport.getNumWorkers() != generated.workers)
    throw RuntimeError(fmt::format(
        "the plan of '{}' has {} workers but the transport runs {}",
        generated.graphName, generated.workers, transport.getNumWorkers()));
  std::vector<unsigned> local = transport.getLocalWorkers();
  return local.size() == 1 ? int(local[0]) : -1;
}

LinkedPlan::LinkedPlan(const GeneratedPlan &generated, LinkOptions opts)
    : generated(generated),
      options(withTransport(std::move(opts), generated.workers)),
      plan(buildExecutablePlan(
          generated, getOnlyLocalWorker(*options.transport, generated))),
      kernels(std::vector<KernelInfo>(generated.kernels,
                                      generated.kernels +
                                          generated.numKernels)),
      transport(options.transport.get()) {
  local = runtime::getLocalWorkers(plan, *transport);
  checkFitsMemory();
  executor = createExecutor(plan, kernels, options, *transport);
}

void LinkedPlan::checkFitsMemory() {
  std::string error;
  // A device's pools report what its memory lacks when they allocate.
  std::optional<std::int64_t> available =
      options.device ? std::nullopt
                     : options.availableMemory ? options.availableMemory
                                               : getAvailableHostMemory();
  if (available) {
    MemoryNeed need;
    for (unsigned w : local)
      need.peaks.push_back(
          w < plan.peakBytesPerWorker.size() ? plan.peakBytesPerWorker[w] : 0);
    error = checkMemory(need, *available,
                        options.availableMemory
                            ? "LinkOptions::availableMemory"
                            : "MemAvailable of /proc/meminfo");
  }
  // Every process learns whether one failed, so none runs on alone.
  std::vector<std::int64_t> failed = {error.empty() ? 0 : 1};
  transport->sumOverProcesses(failed);
  if (!error.empty())
    throw RuntimeError("the plan of '" + std::string(generated.graphName) +
                       "': " + error);
  if (failed[0])
    throw RuntimeError("the plan of '" + std::string(generated.graphName) +
                       "' does not fit the memory of another process");
}

LinkedPlan::LinkedPlan(const GeneratedPlan &generated,
                       std::chrono::milliseconds timeout)
    : LinkedPlan(generated, [&] {
        LinkOptions options;
        options.timeout = timeout;
        return options;
      }()) {}

LinkedPlan::~LinkedPlan() {
  // The executor goes before the device, communicator and transport it
  // runs on.
  executor.reset();
}

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
    // A scalar that updates a param or state (Adam's next step count) is
    // no loss.
    if (std::strcmp(row.role, "output") != 0 || row.rank != 0 ||
        row.updates >= 0 ||
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

std::vector<unsigned> LinkedPlan::getPersistentTensors() const {
  std::vector<unsigned> result;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    if (plan.tensors[t].persistent && plan.tensors[t].graphInput)
      result.push_back(t);
  return result;
}

std::optional<Box> LinkedPlan::getStoredBox(unsigned t, unsigned w) const {
  const TensorInfo &info = plan.tensors.at(t);
  if (w >= plan.workers || !info.stored[w] || info.stored[w]->isEmpty())
    return std::nullopt;
  return info.stored[w];
}

void LinkedPlan::setInput(unsigned t, const HostTensor &value) {
  executor->setInput(t, value);
}

void LinkedPlan::setShard(unsigned t, unsigned w, const HostTensor &shard) {
  const TensorInfo &info = plan.tensors.at(t);
  std::optional<Box> box = getStoredBox(t, w);
  if (!box)
    throw RuntimeError(fmt::format("tensor '{}': worker {} stores none of it",
                                   info.name, w));
  if (shard.type != info.type || shard.shape != box->getExtents())
    throw RuntimeError(fmt::format(
        "tensor '{}': worker {}'s shard {} needs {} {}, got {} {}", info.name,
        w, box->format(), getElementTypeName(info.type),
        Box::whole(box->getExtents()).format(),
        getElementTypeName(shard.type), Box::whole(shard.shape).format()));
  executor->setInputShard(t, w, shard.data);
}

HostTensor LinkedPlan::getShard(unsigned t, unsigned w) const {
  const TensorInfo &info = plan.tensors.at(t);
  HostTensor shard;
  shard.type = info.type;
  shard.data = executor->readShard(t, w);
  shard.shape = info.stored[w]->getExtents();
  return shard;
}

HostTensor LinkedPlan::gather(unsigned t) { return executor->gather(t); }

/// A whole value of `info` from `count` elements of `type` at `data`.
static HostTensor makeWhole(const TensorInfo &info, ElementType type,
                            const void *data, std::size_t count) {
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
  return value;
}

void LinkedPlan::setInput(const std::string &name,
                          const std::vector<float> &values) {
  unsigned t = getTensor(name);
  setInput(t, makeWhole(plan.tensors[t], ElementType::F32, values.data(),
                        values.size()));
}

void LinkedPlan::setInput(const std::string &name,
                          const std::vector<std::int64_t> &values) {
  unsigned t = getTensor(name);
  setInput(t, makeWhole(plan.tensors[t], ElementType::I64, values.data(),
                        values.size()));
}

std::vector<float> LinkedPlan::gatherFloats(const std::string &name) {
  HostTensor value = gather(getTensor(name));
  if (value.type != ElementType::F32)
    throw RuntimeError("tensor '" + name + "' is not f32");
  std::vector<float> result(value.data.size() / sizeof(float));
  std::memcpy(result.data(), value.data.data(), value.data.size());
  return result;
}

double LinkedPlan::getLossValue() {
  HostTensor value = gather(getLoss());
  // The root has the value; every process gets it.
  Bytes data(sizeof(double), 0);
  if (executor->isRoot()) {
    double loss;
    if (value.type == ElementType::F64) {
      std::memcpy(&loss, value.data.data(), sizeof loss);
    } else {
      float single;
      std::memcpy(&single, value.data.data(), sizeof single);
      loss = single;
    }
    std::memcpy(data.data(), &loss, sizeof loss);
  }
  transport->broadcast(data);
  double loss;
  std::memcpy(&loss, data.data(), sizeof loss);
  return loss;
}
