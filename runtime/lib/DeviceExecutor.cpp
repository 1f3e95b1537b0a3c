//===- DeviceExecutor.cpp - Run an ExecutablePlan on a Device -------------===//
//
// This file implements the device executor: the step of StepEngine.h over
// a Device and a Communicator. One host thread enqueues, for every op in
// graph order and every local worker, the engine's phases: local pieces
// copied on the worker's stream, remote ones packed on the source's
// stream, moved one message at a time through the Communicator and
// unpacked (or combined, at the roots of partial values) on the
// destination's; the kernel; the releases at last use. After the last op
// it moves updated parameters into their parameters' stored boxes, then
// waits for the device. The pieces and their order are the CPU Executor's
// (Schedule.h, StepEngine.h), so both move the same bytes and measure the
// same peaks. Across processes each one enqueues its own workers' work and
// its side of every transfer; the communicator pairs the sides up.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "StepEngine.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/InPlaceUpdates.h"

#include <fmt/format.h>

using namespace tofu::runtime;
using namespace tofu::runtime::detail;
using std::int64_t;

/// One step: the engine's phases over every local worker, on the device.
class DeviceExecutor::Step
    : public StepEngine<DeviceExecutor::Step, DeviceExecutor::Worker,
                        DeviceBuffer> {
public:
  Step(DeviceExecutor &ex, std::vector<Worker *> locals)
      : StepEngine(ex.plan, ex.schedule, ex.liveness, std::move(locals),
                   ex.failWorker, ex.failOp),
        device(ex.device), communicator(ex.communicator) {}

  // The policy (StepEngine.h): everything on the worker's stream.
  void copy(unsigned w, const Box &box, const void *src, const Box &srcBox,
            void *dst, const Box &dstBox, unsigned size) {
    device.copyRegion(w, box, src, srcBox, dst, dstBox, size);
  }
  void pack(unsigned w, const Box &box, const void *src, const Box &srcBox,
            unsigned char *dst, unsigned size) {
    device.copyRegion(w, box, src, srcBox, dst, box, size);
  }
  void unpack(unsigned w, const Box &box, const unsigned char *src,
              void *dst, const Box &dstBox, unsigned size) {
    device.copyRegion(w, box, src, box, dst, dstBox, size);
  }
  void combine(unsigned w, Reducer reducer, ElementType type, const Box &box,
               const unsigned char *src, void *dst, const Box &dstBox) {
    device.reduceRegion(w, reducer, type, box, src, dst, dstBox);
  }
  void launch(Worker &worker, unsigned i, const KernelCall &call) {
    device.launch(worker.id, plan.ops[i].kernel, call);
  }
  /// Moves message `m` as a group of one, into a receive buffer on its
  /// destination. The exchange finishes before later work on both
  /// workers' streams and the pool reuses a buffer only on its worker's
  /// stream, so a released send buffer is never overwritten while the
  /// transfer still reads it. Every process calls the communicator for
  /// every message of its schedule (the whole schedule's, or its one
  /// worker's), with the transfers of its workers.
  DeviceBuffer transfer(const Message &m, Phase, unsigned,
                        DeviceBuffer &send) {
    std::vector<Transfer> group;
    DeviceBuffer receive;
    Worker *dst = here(m.dst);
    if (dst)
      receive = dst->pool.allocate(m.bytes);
    if (here(m.src) || dst)
      group.push_back(
          Transfer{m.src, m.dst, send.data(), receive.data(), m.bytes});
    communicator.exchange(group);
    return receive;
  }

private:
  Device &device;
  Communicator &communicator;
};

DeviceExecutor::DeviceExecutor(const ExecutablePlan &plan, Device &device,
                               Communicator &communicator,
                               Transport *processes)
    : plan(plan), liveness(plan), device(device), communicator(communicator),
      transport(processes) {
  // A process running one worker (one MPI rank) schedules only its pieces
  // where the communicator pairs transfers per pair of workers.
  int only = -1;
  if (processes && communicator.pairsPerWorkerPair()) {
    std::vector<unsigned> here = processes->getLocalWorkers();
    if (here.size() == 1)
      only = int(here[0]);
  }
  schedule = checkAndSchedule(plan, "device", device.getNumWorkers(), only);
  if (!transport) {
    // One process: nothing to exchange but the counts it keeps.
    ownTransport =
        createThreadTransport(plan.workers, std::chrono::milliseconds(0));
    transport = ownTransport.get();
  }
  workers.resize(plan.workers);
  for (unsigned w : getLocalWorkers(plan, *transport)) {
    workers[w] = std::make_unique<Worker>(device, w);
    workers[w]->stored.resize(plan.tensors.size());
    workers[w]->inPlace = getInPlaceUpdates(plan, liveness.getLastUse(), w);
    workers[w]->pool.setTrimming(plan.trimPools);
  }
  inputs = std::make_unique<InputShards>(plan,
                                         getLocalWorkers(plan, *transport));
}

DeviceExecutor::~DeviceExecutor() {
  // The device finishes what it was given before the pools free memory.
  try {
    device.synchronize();
  } catch (const RuntimeError &) {
  }
  for (auto &worker : workers)
    if (worker)
      worker->stored.clear();
}

void DeviceExecutor::setInput(unsigned t, const HostTensor &value) {
  inputs->setWhole(t, value);
}

void DeviceExecutor::setInputShard(unsigned t, unsigned w, Bytes values) {
  inputs->setShard(t, w, std::move(values));
}

void DeviceExecutor::uploadInputs(Worker &worker) {
  inputs->takePending(
      worker.id, [&](unsigned t) { return bool(worker.stored[t]); },
      [&](unsigned t, const Box &, const Bytes &values) {
        if (!worker.stored[t])
          worker.stored[t] = worker.pool.allocate(values.size());
        device.upload(worker.id, worker.stored[t].data(), values.data(),
                      values.size());
      });
}

StepResult DeviceExecutor::runStep() {
  std::vector<Worker *> local;
  for (auto &worker : workers)
    if (worker) {
      beginWorkerStep(plan, *worker, [&] { uploadInputs(*worker); });
      local.push_back(worker.get());
    }
  communicator.resetMovedBytes();
  try {
    Step step(*this, local);
    step.runOps();
    step.runNextStep();
    device.synchronize();
  } catch (const std::exception &e) {
    failWorker = -1;
    ++steps;
    // Other processes waiting for this one's transfers stop waiting.
    transport->fail(local[0]->id, e.what());
    throw;
  }
  failWorker = -1;
  ++steps;
  std::vector<std::pair<unsigned, int64_t>> peaks, held;
  for (Worker *worker : local) {
    peaks.emplace_back(worker->id, worker->pool.getPeakBytes());
    held.emplace_back(worker->id, worker->pool.getPeakHeldBytes());
  }
  return sumStepResult(*transport, plan.workers, communicator.getMovedBytes(),
                       peaks, held);
}

unsigned DeviceExecutor::getNumDirectUpdates() const {
  unsigned n = 0;
  for (auto &worker : workers)
    if (worker)
      n += worker->overwritten;
  return n;
}

HostTensor DeviceExecutor::gather(unsigned t) {
  std::vector<Bytes> copies(plan.workers);
  return gatherTensor(
      plan, t, *transport, steps,
      [&](unsigned w) -> const unsigned char * {
        const DeviceBuffer &buffer = getHeldBuffer(plan, *workers[w], t);
        if (!buffer)
          return nullptr;
        copies[w].resize(buffer.size());
        device.download(w, copies[w].data(), buffer.data(), buffer.size());
        return copies[w].data();
      });
}

Bytes DeviceExecutor::readShard(unsigned t, unsigned w) {
  const DeviceBuffer &buffer = getShardBuffer(
      plan, w < workers.size() ? workers[w].get() : nullptr, t, w);
  Bytes values(plan.tensors[t].stored[w]->getVolume() *
               getElementSize(plan.tensors[t].type));
  device.download(w, values.data(), buffer.data(), values.size());
  return values;
}

void DeviceExecutor::injectFailure(unsigned worker, unsigned op) {
  failWorker = worker;
  failOp = op;
}
