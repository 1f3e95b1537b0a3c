//===- DeviceExecutor.cpp - Run an ExecutablePlan on a Device -------------===//
//
// This file implements the device executor. One host thread enqueues, for
// every op in graph order and every worker: the input boxes (local pieces
// copied on the worker's stream, remote ones packed on the source's
// stream, moved one message at a time through the Communicator and
// unpacked on the destination's), the kernel, the partial values' combination at their
// roots, the output's delivery into the stored boxes, and the release of
// the tensors whose last reader this op was. After the last op it moves
// updated parameters into their parameters' stored boxes, then waits for
// the device. The pieces and their order are the CPU Executor's
// (Schedule.h), so both move the same bytes. Across processes each one
// enqueues its own workers' work and its side of every transfer; the
// communicator pairs the sides up.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/InPlaceUpdates.h"
#include "tofu/Runtime/StepMemory.h"

#include <fmt/format.h>

using namespace tofu::runtime;
using std::int64_t;

/// One step: the per-op phases over all workers.
class DeviceExecutor::Step {
public:
  explicit Step(DeviceExecutor &ex)
      : plan(ex.plan), schedule(ex.schedule), device(ex.device),
        communicator(ex.communicator), workers(ex.workers),
        liveness(ex.liveness),
        failWorker(ex.failWorker), failOp(ex.failOp) {}

  void runOp(unsigned i);
  void runNextStep();

private:
  /// Where a piece's values lie on its source worker.
  struct Endpoint {
    const void *data;
    const Box *box;
  };

  unsigned elementSize(unsigned t) const {
    return getElementSize(plan.tensors[t].type);
  }
  const Box &storedBox(unsigned w, unsigned t) const {
    return *plan.tensors[t].stored[w];
  }
  bool stores(unsigned w, unsigned t) const {
    return plan.tensors[t].stored[w] && !plan.tensors[t].stored[w]->isEmpty();
  }
  /// Whether this process runs worker `w`.
  bool here(unsigned w) const { return workers[w] != nullptr; }
  DeviceBuffer &ensureStored(unsigned w, unsigned t) {
    DeviceBuffer &b = workers[w]->stored[t];
    if (!b)
      b = workers[w]->pool.allocate(storedBox(w, t).getVolume() *
                                    elementSize(t));
    return b;
  }

  /// Moves the pieces of `pieces` between distinct workers, one message
  /// per (source, destination) in getMessages' order: packs them into a
  /// staging buffer on the source, moves it into one on the destination,
  /// hands each piece's packed values there to `sink(piece, data)`, and
  /// releases both before the next message. This process does its
  /// workers' side of each message; every process calls the communicator
  /// for every message.
  template <typename SizeFn, typename SourceFn, typename SinkFn>
  void movePieces(const std::vector<Piece> &pieces, SizeFn sizeOf,
                  SourceFn source, SinkFn sink);

  const ExecutablePlan &plan;
  const Schedule &schedule;
  Device &device;
  Communicator &communicator;
  std::vector<std::unique_ptr<Worker>> &workers;
  const Liveness &liveness;
  int failWorker;
  unsigned failOp;
};

template <typename SizeFn, typename SourceFn, typename SinkFn>
void DeviceExecutor::Step::movePieces(const std::vector<Piece> &pieces,
                                      SizeFn sizeOf, SourceFn source,
                                      SinkFn sink) {
  // One message at a time, in getMessages' order (StepMemory.h): a send
  // buffer on the source and a receive buffer on the destination, moved as
  // a group of one, unpacked, and released before the next message. The
  // exchange finishes before later work on both workers' streams and the
  // pool reuses a buffer only on its worker's stream, so a released send
  // buffer is never overwritten while the transfer still reads it.
  for (const Message &m : getMessages(pieces, sizeOf)) {
    std::vector<Transfer> group;
    DeviceBuffer send, receive;
    if (here(m.src) || here(m.dst)) {
      if (here(m.src)) {
        send = workers[m.src]->pool.allocate(m.bytes);
        std::size_t at = 0;
        for (const Piece &piece : pieces) {
          if (piece.src != m.src || piece.dst != m.dst)
            continue;
          Endpoint from = source(piece);
          unsigned size = sizeOf(piece);
          device.copyRegion(piece.src, piece.box, from.data, *from.box,
                            send.data() + at, piece.box, size);
          at += piece.box.getVolume() * size;
        }
      }
      if (here(m.dst))
        receive = workers[m.dst]->pool.allocate(m.bytes);
      group.push_back(
          Transfer{m.src, m.dst, send.data(), receive.data(), m.bytes});
    }
    // Every process calls the communicator for every message of its
    // schedule (the whole schedule's, or its one worker's).
    communicator.exchange(group);
    if (!here(m.dst))
      continue;
    // In schedule order: the order in which the CPU executor combines
    // partial values, so that sums agree bit for bit.
    std::size_t at = 0;
    for (const Piece &piece : pieces) {
      if (piece.src != m.src || piece.dst != m.dst)
        continue;
      sink(piece, receive.data() + at);
      at += piece.box.getVolume() * sizeOf(piece);
    }
  }
}

void DeviceExecutor::Step::runOp(unsigned i) {
  const OpInfo &op = plan.ops[i];
  const OpSchedule &sched = schedule.ops[i];
  unsigned numWorkers = plan.workers, numInputs = op.inputs.size();

  // Fetch: the input boxes, read in place where a stored box is one.
  std::vector<std::vector<DeviceBuffer>> inputBuffers(numWorkers);
  std::vector<std::vector<const unsigned char *>> inputData(numWorkers);
  for (unsigned w = 0; w != numWorkers; ++w) {
    if (!here(w))
      continue;
    inputBuffers[w].resize(numInputs);
    inputData[w].assign(numInputs, nullptr);
    for (unsigned p = 0; p != numInputs; ++p) {
      unsigned t = op.inputs[p];
      const Box &box = op.workers[w].inputs[p];
      if (box.isEmpty())
        continue;
      if (readsInPlace(plan, i, p, w)) {
        inputData[w][p] = workers[w]->stored[t].data();
        continue;
      }
      inputBuffers[w][p] =
          workers[w]->pool.allocate(box.getVolume() * elementSize(t));
      inputData[w][p] = inputBuffers[w][p].data();
    }
  }
  for (const Piece &piece : sched.fetch) {
    unsigned w = piece.dst, t = op.inputs[piece.slot];
    if (piece.src != w || !here(w) || !inputBuffers[w][piece.slot])
      continue;
    device.copyRegion(w, piece.box, workers[w]->stored[t].data(),
                      storedBox(w, t), inputBuffers[w][piece.slot].data(),
                      op.workers[w].inputs[piece.slot], elementSize(t));
  }
  auto inputSize = [&](const Piece &piece) {
    return elementSize(op.inputs[piece.slot]);
  };
  movePieces(
      sched.fetch, inputSize,
      [&](const Piece &piece) {
        unsigned t = op.inputs[piece.slot];
        return Endpoint{workers[piece.src]->stored[t].data(),
                        &storedBox(piece.src, t)};
      },
      [&](const Piece &piece, const unsigned char *packed) {
        device.copyRegion(piece.dst, piece.box, packed, piece.box,
                          inputBuffers[piece.dst][piece.slot].data(),
                          op.workers[piece.dst].inputs[piece.slot],
                          inputSize(piece));
      });

  // Compute.
  unsigned o = op.output, outSize = elementSize(o);
  std::vector<bool> direct(numWorkers);
  std::vector<DeviceBuffer> outTemp(numWorkers);
  std::vector<unsigned char *> outData(numWorkers, nullptr);
  for (unsigned w = 0; w != numWorkers; ++w) {
    if (!here(w))
      continue;
    if (int(w) == failWorker && i == failOp)
      throw RuntimeError(
          fmt::format("worker {}: injected failure at op '{}'", w, op.name));
    const OpShare &share = op.workers[w];
    // A next value written over what it replaces is computed aside (the
    // kernel may read the old value), unless the kernel reads that only at
    // the element it writes: then straight into its buffer, which the
    // value takes at delivery (InPlaceUpdates.h).
    Worker &worker = *workers[w];
    OutputPlace place = getOutputPlace(plan, i, w, worker.inPlace);
    direct[w] = place.direct;
    if (place.overReplaced) {
      DeviceBuffer &replaced = worker.stored[o]
                                   ? worker.stored[o]
                                   : worker.stored[plan.tensors[o].updates];
      outData[w] = replaced.data();
      ++worker.overwritten;
    } else if (direct[w]) {
      outData[w] = ensureStored(w, o).data();
    } else if (!share.output.isEmpty()) {
      outTemp[w] = workers[w]->pool.allocate(share.output.getVolume() * outSize);
      outData[w] = outTemp[w].data();
    }
    if (share.output.isEmpty())
      continue;
    std::vector<BoxView> views(numInputs);
    std::vector<std::vector<int64_t>> extents(numInputs);
    for (unsigned p = 0; p != numInputs; ++p) {
      const Box &box = share.inputs[p];
      extents[p] = box.getExtents();
      views[p] = BoxView{plan.tensors[op.inputs[p]].type, box.getRank(),
                         const_cast<unsigned char *>(inputData[w][p]),
                         box.lo.data(), extents[p].data()};
    }
    std::vector<int64_t> outExtent = share.output.getExtents();
    KernelCall call{views.data(), numInputs,
                    BoxView{plan.tensors[o].type, share.output.getRank(),
                            outData[w], share.output.lo.data(),
                            outExtent.data()},
                    share.iteration.lo.data(), share.iteration.hi.data()};
    device.launch(w, op.kernel, call);
  }
  inputBuffers.clear();

  // Combine partial values at their roots.
  auto outputSize = [&](const Piece &) { return outSize; };
  auto fromOutput = [&](const Piece &piece) {
    return Endpoint{outData[piece.src], &op.workers[piece.src].output};
  };
  if (op.partial)
    movePieces(sched.reduce, outputSize, fromOutput,
               [&](const Piece &piece, const unsigned char *packed) {
                 device.reduceRegion(piece.dst, op.reducer,
                                     plan.tensors[o].type, piece.box, packed,
                                     outData[piece.dst],
                                     op.workers[piece.dst].output);
               });

  // Deliver the output to the workers storing it; a next value written in
  // place takes the buffer of what it replaces, whose last reader ran.
  for (unsigned w = 0; w != numWorkers; ++w)
    if (here(w) && stores(w, o)) {
      std::vector<DeviceBuffer> &stored = workers[w]->stored;
      if (workers[w]->inPlace[o] && !stored[o])
        stored[o] = std::move(stored[plan.tensors[o].updates]);
      ensureStored(w, o);
    }
  for (const Piece &piece : sched.deliver)
    if (piece.src == piece.dst && here(piece.src) && !direct[piece.src])
      device.copyRegion(piece.src, piece.box, outData[piece.src],
                        op.workers[piece.src].output,
                        workers[piece.src]->stored[o].data(),
                        storedBox(piece.src, o), outSize);
  movePieces(sched.deliver, outputSize, fromOutput,
             [&](const Piece &piece, const unsigned char *packed) {
               device.copyRegion(piece.dst, piece.box, packed, piece.box,
                                 workers[piece.dst]->stored[o].data(),
                                 storedBox(piece.dst, o), outSize);
             });
  outTemp.clear();

  // Free what no later op reads.
  for (auto &worker : workers) {
    if (!worker)
      continue;
    for (unsigned t : op.inputs)
      if (liveness.isReleasedAfter(t, i))
        worker->stored[t].reset();
    if (liveness.isReleasedAfter(o, i))
      worker->stored[o].reset();
  }
}

void DeviceExecutor::Step::runNextStep() {
  const std::vector<Piece> &pieces = schedule.nextStep;
  // Per worker, the new values of each parameter it stores, built aside so
  // that a parameter is never overwritten while its update still reads it.
  std::vector<std::vector<std::pair<unsigned, DeviceBuffer>>> fresh(
      plan.workers);
  auto bufferOf = [&](unsigned w, unsigned param) -> DeviceBuffer & {
    for (auto &entry : fresh[w])
      if (entry.first == param)
        return entry.second;
    fresh[w].emplace_back(param, workers[w]->pool.allocateExact(
                                     storedBox(w, param).getVolume() *
                                     elementSize(param)));
    return fresh[w].back().second;
  };
  // A next value written in place needs neither: its pieces here are its
  // own box, already in the buffer.
  for (const Piece &piece : pieces) {
    unsigned w = piece.dst, param = plan.tensors[piece.slot].updates;
    if (!here(w) || workers[w]->inPlace[piece.slot])
      continue;
    DeviceBuffer &dst = bufferOf(w, param);
    if (piece.src == w)
      device.copyRegion(w, piece.box, workers[w]->stored[piece.slot].data(),
                        storedBox(w, piece.slot), dst.data(),
                        storedBox(w, param), elementSize(param));
  }
  movePieces(
      pieces, [&](const Piece &piece) { return elementSize(piece.slot); },
      [&](const Piece &piece) {
        return Endpoint{workers[piece.src]->stored[piece.slot].data(),
                        &storedBox(piece.src, piece.slot)};
      },
      [&](const Piece &piece, const unsigned char *packed) {
        unsigned param = plan.tensors[piece.slot].updates;
        device.copyRegion(piece.dst, piece.box, packed, piece.box,
                          bufferOf(piece.dst, param).data(),
                          storedBox(piece.dst, param), elementSize(param));
      });
  for (unsigned w = 0; w != plan.workers; ++w)
    for (auto &entry : fresh[w])
      workers[w]->stored[entry.first] = std::move(entry.second);
  // The buffers written in place are their parameters' again.
  for (unsigned w = 0; w != plan.workers; ++w)
    if (here(w))
      for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
        if (workers[w]->inPlace[t] && workers[w]->stored[t])
          workers[w]->stored[plan.tensors[t].updates] =
              std::move(workers[w]->stored[t]);
}

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
  std::vector<unsigned> local;
  for (auto &worker : workers)
    if (worker) {
      // The last step's results were read (gather) before this step.
      for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
        if (!isHeldAcrossSteps(plan.tensors[t]))
          worker->stored[t].reset();
      worker->pool.beginStep();
      worker->overwritten = 0;
      uploadInputs(*worker);
      worker->pool.resetPeak();
      local.push_back(worker->id);
    }
  communicator.resetMovedBytes();
  try {
    Step step(*this);
    for (unsigned i = 0, e = plan.ops.size(); i != e; ++i)
      step.runOp(i);
    step.runNextStep();
    device.synchronize();
  } catch (const std::exception &e) {
    failWorker = -1;
    ++steps;
    // Other processes waiting for this one's transfers stop waiting.
    transport->fail(local[0], e.what());
    throw;
  }
  failWorker = -1;
  ++steps;
  std::vector<std::pair<unsigned, int64_t>> peaks, held;
  for (unsigned w : local) {
    peaks.emplace_back(w, workers[w]->pool.getPeakBytes());
    held.emplace_back(w, workers[w]->pool.getPeakHeldBytes());
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

/// The buffer of `worker` holding tensor `t` after a step: a next value
/// written in place is in its parameter's buffer.
static const DeviceBuffer &getHeldBuffer(const ExecutablePlan &plan,
                                         const DeviceExecutor::Worker &worker,
                                         unsigned t) {
  unsigned held = worker.inPlace[t] && !worker.stored[t]
                      ? unsigned(plan.tensors[t].updates)
                      : t;
  return worker.stored.at(held);
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
  const TensorInfo &info = plan.tensors.at(t);
  if (w >= plan.workers || !workers[w])
    throw RuntimeError(fmt::format(
        "tensor '{}': worker {} is not run by this process", info.name, w));
  const DeviceBuffer &buffer = getHeldBuffer(plan, *workers[w], t);
  if (!info.stored[w] || info.stored[w]->isEmpty() || !buffer)
    throw RuntimeError(fmt::format(
        "tensor '{}' is not held by worker {} now", info.name, w));
  Bytes values(info.stored[w]->getVolume() * getElementSize(info.type));
  device.download(w, values.data(), buffer.data(), values.size());
  return values;
}

void DeviceExecutor::injectFailure(unsigned worker, unsigned op) {
  failWorker = worker;
  failOp = op;
}
