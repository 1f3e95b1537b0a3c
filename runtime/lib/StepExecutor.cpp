//===- StepExecutor.cpp - What both executors share -----------------------===//
//
// This file implements the pieces of a step that the CPU Executor and the
// DeviceExecutor share around the engine (StepEngine.h): checking a plan
// and building its schedule, the local workers of a transport, checking a
// graph input, a step's counts summed over the processes, and assembling
// and gathering a tensor from the workers' stored boxes.
//
//===----------------------------------------------------------------------===//

#include "StepEngine.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"

#include <fmt/format.h>

using namespace tofu::runtime;
using namespace tofu::runtime::detail;
using std::int64_t;

StepExecutor::~StepExecutor() = default;

void tofu::runtime::checkInput(const ExecutablePlan &plan, unsigned t,
                               const HostTensor &value) {
  const TensorInfo &info = plan.tensors.at(t);
  if (!info.graphInput)
    throw RuntimeError("tensor '" + info.name + "' is not a graph input");
  if (value.shape != info.shape || value.type != info.type)
    throw RuntimeError("tensor '" + info.name + "' needs " +
                       getElementTypeName(info.type) + " " +
                       Box::whole(info.shape).format() + ", got " +
                       getElementTypeName(value.type) + " " +
                       Box::whole(value.shape).format());
  if (int64_t(value.data.size()) !=
      info.getNumElements() * getElementSize(info.type))
    throw RuntimeError("tensor '" + info.name + "': wrong number of bytes");
}

Schedule tofu::runtime::checkAndSchedule(const ExecutablePlan &plan,
                                         const char *what, unsigned workers,
                                         int worker) {
  validatePlan(plan);
  if (workers != plan.workers)
    throw RuntimeError(fmt::format("the {} has {} workers but the plan {}",
                                   what, workers, plan.workers));
  if (worker >= 0 && unsigned(worker) < plan.workers)
    return buildWorkerSchedule(plan, worker);
  return buildSchedule(plan);
}

std::vector<unsigned>
tofu::runtime::getLocalWorkers(const ExecutablePlan &plan,
                               const Transport &transport) {
  std::vector<unsigned> local = transport.getLocalWorkers();
  std::vector<bool> seen(plan.workers, false);
  for (unsigned w : local) {
    if (w >= plan.workers || seen[w])
      throw RuntimeError(fmt::format("the transport runs worker {} here, "
                                     "which is not a worker of the plan or "
                                     "runs twice",
                                     w));
    seen[w] = true;
  }
  if (local.empty())
    throw RuntimeError("the transport runs no worker here");
  return local;
}

StepResult tofu::runtime::sumStepResult(
    Transport &transport, unsigned workers, int64_t movedBytes,
    const std::vector<std::pair<unsigned, int64_t>> &localPeaks,
    const std::vector<std::pair<unsigned, int64_t>> &localHeld,
    const std::vector<std::pair<unsigned, WorkerTimes>> &localTimes) {
  // The counts of every process: moved bytes, each worker's peak, each
  // worker's most held bytes, then each worker's times in nanoseconds
  // (compute, comm, wait, step) and its phases taken sends first and
  // receives first.
  std::vector<int64_t> counts(1 + 8 * workers, 0);
  counts[0] = movedBytes;
  for (auto [w, peak] : localPeaks)
    counts[1 + w] = peak;
  for (auto [w, held] : localHeld)
    counts[1 + workers + w] = held;
  auto ns = [](double seconds) { return int64_t(seconds * 1e9); };
  for (const auto &[w, t] : localTimes) {
    int64_t *at = &counts[1 + 2 * workers + 6 * w];
    at[0] = ns(t.compute);
    at[1] = ns(t.comm);
    at[2] = ns(t.wait);
    at[3] = ns(t.step);
    at[4] = t.sendsFirst;
    at[5] = t.receivesFirst;
  }
  transport.sumOverProcesses(counts);
  StepResult result;
  result.movedBytes = counts[0];
  result.peakBytesPerWorker.assign(counts.begin() + 1,
                                   counts.begin() + 1 + workers);
  result.heldBytesPerWorker.assign(counts.begin() + 1 + workers,
                                   counts.begin() + 1 + 2 * workers);
  for (unsigned w = 0; w != workers; ++w) {
    const int64_t *at = &counts[1 + 2 * workers + 6 * w];
    result.timesPerWorker.push_back(WorkerTimes{
        at[0] * 1e-9, at[1] * 1e-9, at[2] * 1e-9, at[3] * 1e-9, at[4], at[5]});
  }
  return result;
}

HostTensor tofu::runtime::assembleTensor(
    const ExecutablePlan &plan, unsigned t,
    const std::vector<const unsigned char *> &held) {
  const TensorInfo &info = plan.tensors.at(t);
  unsigned size = getElementSize(info.type);
  HostTensor result{info.type, info.shape, {}};
  result.data.resize(info.getNumElements() * size);
  std::vector<const Box *> boxes;
  for (unsigned w = 0; w != plan.workers; ++w)
    boxes.push_back(info.stored[w] && held[w] ? &*info.stored[w] : nullptr);
  Box whole = Box::whole(info.shape);
  forEachCell(whole, boxes, [&](const Box &cell) {
    for (unsigned w = 0; w != plan.workers; ++w)
      if (boxes[w] && !boxes[w]->isEmpty() && boxes[w]->contains(cell)) {
        copyRegion(cell, held[w], *boxes[w], result.data.data(), whole, size);
        return;
      }
    throw RuntimeError("tensor '" + info.name + "' is not held after the step");
  });
  return result;
}

HostTensor tofu::runtime::gatherTensor(
    const ExecutablePlan &plan, unsigned t, Transport &transport,
    unsigned step,
    const std::function<const unsigned char *(unsigned)> &local) {
  const TensorInfo &info = plan.tensors.at(t);
  unsigned size = getElementSize(info.type);
  auto holds = [&](unsigned w) {
    return info.stored[w] && !info.stored[w]->isEmpty();
  };
  std::vector<bool> isLocal(plan.workers, false);
  for (unsigned w : transport.getLocalWorkers())
    isLocal.at(w) = true;
  // Workers of other processes send worker 0 their stored boxes: empty
  // when they do not hold the tensor now.
  std::uint64_t tag = UncountedTag | makeTag(step, t, Gather);
  if (!isLocal[0]) {
    for (unsigned w = 0; w != plan.workers; ++w)
      if (isLocal[w] && holds(w)) {
        const unsigned char *data = local(w);
        transport.send(w, 0, tag,
                       data ? Bytes(data, data + info.stored[w]->getVolume() *
                                                     size)
                            : Bytes());
      }
    return HostTensor{info.type, info.shape, {}};
  }
  std::vector<Bytes> remote(plan.workers);
  std::vector<const unsigned char *> data(plan.workers, nullptr);
  for (unsigned w = 0; w != plan.workers; ++w) {
    if (!holds(w))
      continue;
    if (isLocal[w]) {
      data[w] = local(w);
    } else {
      remote[w] = transport.receive(0, w, tag);
      size_t bytes = info.stored[w]->getVolume() * size;
      if (!remote[w].empty() && remote[w].size() != bytes)
        throw RuntimeError(
            fmt::format("worker {} sent {} bytes of '{}' but holds {}", w,
                        remote[w].size(), info.name, bytes));
      if (!remote[w].empty())
        data[w] = remote[w].data();
    }
  }
  return assembleTensor(plan, t, data);
}
