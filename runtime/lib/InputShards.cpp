//===- InputShards.cpp - Graph inputs' values per local worker ------------===//

#include "tofu/Runtime/InputShards.h"

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"

#include <fmt/format.h>

using namespace tofu::runtime;

InputShards::InputShards(const ExecutablePlan &plan,
                         const std::vector<unsigned> &localWorkers)
    : plan(plan), values(plan.workers), fresh(plan.workers) {
  for (unsigned w : localWorkers) {
    values.at(w).resize(plan.tensors.size());
    fresh.at(w).assign(plan.tensors.size(), false);
  }
}

void InputShards::setWhole(unsigned t, const HostTensor &value) {
  checkInput(plan, t, value);
  const TensorInfo &info = plan.tensors[t];
  unsigned size = getElementSize(info.type);
  for (unsigned w = 0; w != plan.workers; ++w) {
    if (values[w].empty() || !info.stored[w] || info.stored[w]->isEmpty())
      continue;
    const Box &box = *info.stored[w];
    Bytes shard(box.getVolume() * size);
    packRegion(box, value.data.data(), Box::whole(info.shape), shard.data(),
               size);
    values[w][t] = std::move(shard);
    fresh[w][t] = true;
  }
}

void InputShards::setShard(unsigned t, unsigned w, Bytes shard) {
  const TensorInfo &info = plan.tensors.at(t);
  if (!info.graphInput)
    throw RuntimeError("tensor '" + info.name + "' is not a graph input");
  if (w >= plan.workers || values[w].empty())
    throw RuntimeError(fmt::format(
        "tensor '{}': worker {} is not run by this process", info.name, w));
  if (!info.stored[w] || info.stored[w]->isEmpty())
    throw RuntimeError(fmt::format("tensor '{}': worker {} stores none of it",
                                   info.name, w));
  std::int64_t bytes =
      info.stored[w]->getVolume() * getElementSize(info.type);
  if (std::int64_t(shard.size()) != bytes)
    throw RuntimeError(fmt::format(
        "tensor '{}': worker {}'s shard {} is {} bytes of {}, got {}",
        info.name, w, info.stored[w]->format(), bytes,
        getElementTypeName(info.type), shard.size()));
  values[w][t] = std::move(shard);
  fresh[w][t] = true;
}

void InputShards::takePending(
    unsigned w, const std::function<bool(unsigned)> &held,
    const std::function<void(unsigned, const Box &, const Bytes &)> &take) {
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    const TensorInfo &info = plan.tensors[t];
    if (!info.graphInput || !info.stored[w] || info.stored[w]->isEmpty())
      continue;
    if (held(t) && !fresh[w][t])
      continue;
    if (!values[w][t])
      throw RuntimeError("graph input '" + info.name + "' has no value");
    take(t, *info.stored[w], *values[w][t]);
    fresh[w][t] = false;
  }
}
