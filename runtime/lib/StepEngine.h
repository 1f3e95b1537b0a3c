//===- StepEngine.h - The step both executors run ---------------*- C++ -*-===//
//
// This file implements the step of an ExecutablePlan once, for both
// executors. For every op in graph order, on the workers an engine runs:
//  1. fetch: the input boxes, read in place where one is a stored box,
//     else allocated, local pieces copied in, remote pieces moved;
//  2. compute: the kernel on the iteration box, into the stored box (when
//     the op computes it whole and final), into the buffer of the value it
//     replaces (a next value written in place, InPlaceUpdates.h), or into
//     a workspace; the input boxes are released;
//  3. reduce (partial ops): partial pieces moved to their roots, which
//     combine them in schedule order;
//  4. deliver: the stored box (a next value written in place takes the
//     buffer of what it replaces), local pieces copied, remote ones moved;
//     the workspace is released;
//  5. free: the stored boxes whose last reader or writer this op was
//     (Liveness.h).
// After the last op, the next step's moves: each parameter's new values
// built aside (or, written in place, already in its buffer), then swapped
// in. Remote pieces go one message per (source, destination) pair, in
// getMessages' order (or an order the executor picks, orderMessages), one
// staging buffer on each side, released before the next message: the
// order StepMemory.h gives and predictPeaks replays, so the bytes moved
// are the plan's comm_bytes and the pools' peaks its peak_bytes_per_worker.
//
// StepEngine<Derived, Worker, Buffer> is a CRTP base: an executor's step
// derives from it and supplies the policy, resolved at compile time (no
// virtual call):
//  - memory and data on a worker: `copy` (a sub-box between two dense
//    boxes of one worker), `pack` (a sub-box into consecutive bytes),
//    `unpack` (the reverse), `combine` (packed partial values into a box
//    with a reducer) and `launch` (an op's kernel on a KernelCall);
//  - the message mover: `transfer(m, phase, op, send)` moves message `m`
//    whose packed pieces are in `send` on the source (empty where this
//    engine does not run it) and returns the destination's staging buffer
//    holding them (empty where it does not run it);
//  - hooks that default to nothing: `orderMessages` (the messages of a
//    phase this engine takes part in, in the order it moves them),
//    `beforeCompute` (before op i's kernels: the CPU's posted receives),
//    `deferKernel` and `ranAtGemm` (fusion: a kernel run later, or already
//    run, Fusion.h), `beforeRelease` and `endOp` (fusion's buffer
//    accounting at the releases).
// Worker is the executor's per-worker state: `id`, `pool` (allocate,
// allocateExact), `stored` (per tensor a Buffer), `inPlace` (per tensor)
// and `overwritten` (a count). The CPU executor runs one engine per
// worker, each on its own thread over a Transport (Executor.cpp); the
// device executor one engine over every local worker from one host thread,
// on a Device and a Communicator (DeviceExecutor.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_LIB_STEPENGINE_H
#define TOFU_RUNTIME_LIB_STEPENGINE_H

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/InPlaceUpdates.h"
#include "tofu/Runtime/Kernel.h"
#include "tofu/Runtime/Liveness.h"
#include "tofu/Runtime/Schedule.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tofu {
namespace runtime {
namespace detail {

/// The phases of a step, as messages are tagged with them.
enum Phase : std::uint64_t {
  Fetch = 0,
  Reduce = 1,
  Deliver = 2,
  NextStep = 3,
  Gather = 4
};

/// The tag of `phase` of op `op` (or tensor, for Gather) in step `step`.
inline std::uint64_t makeTag(unsigned step, unsigned op, Phase phase) {
  return (std::uint64_t(step) << 40) | (std::uint64_t(op) << 4) | phase;
}

/// Where a piece's values lie on its source worker.
struct Endpoint {
  const void *data;
  const Box *box;
};

/// Releases worker `worker`'s stored boxes that do not outlive a step,
/// begins its pool's step, fills in the graph inputs with `fillInputs()`
/// and restarts its peak: the start of every step (StepMemory.h).
template <typename WorkerT, typename FillFn>
void beginWorkerStep(const ExecutablePlan &plan, WorkerT &worker,
                     FillFn fillInputs) {
  // The last step's results were read (gather) before this step.
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    if (!isHeldAcrossSteps(plan.tensors[t]))
      worker.stored[t].reset();
  worker.pool.beginStep();
  worker.overwritten = 0;
  fillInputs();
  worker.pool.resetPeak();
}

/// The buffer of `worker` holding tensor `t` after a step: a next value
/// written in place is in its parameter's buffer.
template <typename WorkerT>
const auto &getHeldBuffer(const ExecutablePlan &plan, const WorkerT &worker,
                          unsigned t) {
  unsigned held = worker.inPlace[t] && !worker.stored[t]
                      ? unsigned(plan.tensors[t].updates)
                      : t;
  return worker.stored.at(held);
}

/// getHeldBuffer of local worker `w` (`worker`, null where `w` is not
/// local) for StepExecutor::readShard; throws RuntimeError where the worker
/// is not local or holds none of `t` now.
template <typename WorkerT>
const auto &getShardBuffer(const ExecutablePlan &plan, const WorkerT *worker,
                           unsigned t, unsigned w) {
  const TensorInfo &info = plan.tensors.at(t);
  if (w >= plan.workers || !worker)
    throw RuntimeError(fmt::format(
        "tensor '{}': worker {} is not run by this process", info.name, w));
  const auto &buffer = getHeldBuffer(plan, *worker, t);
  if (!info.stored[w] || info.stored[w]->isEmpty() || !buffer)
    throw RuntimeError(fmt::format(
        "tensor '{}' is not held by worker {} now", info.name, w));
  return buffer;
}

template <typename Derived, typename WorkerT, typename BufferT>
class StepEngine {
public:
  /// An engine over `locals`, the workers it runs (in increasing id
  /// order); worker `failWorker` throws at op `failOp` (injectFailure).
  StepEngine(const ExecutablePlan &plan, const Schedule &schedule,
             const Liveness &liveness, std::vector<WorkerT *> locals,
             int failWorker, unsigned failOp)
      : plan(plan), schedule(schedule), liveness(liveness),
        locals(std::move(locals)), index(plan.workers, -1),
        states(this->locals.size()), failWorker(failWorker), failOp(failOp) {
    for (unsigned k = 0, e = this->locals.size(); k != e; ++k)
      index[this->locals[k]->id] = int(k);
  }

  /// Op `i`'s phases on every worker of the engine.
  void runOp(unsigned i);
  /// Every op in order; an error names the op it happened in (a wait for
  /// a lost worker: which op waited), unless it already names one.
  void runOps() {
    for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
      try {
        runOp(i);
      } catch (const std::exception &error) {
        std::string what = error.what();
        if (what.find(" op '") != std::string::npos)
          throw;
        throw RuntimeError(fmt::format("{} (in op '{}', {} of {})", what,
                                       plan.ops[i].name, i + 1, e));
      }
    }
  }
  /// After the last op: the parameters' next values into their stored
  /// boxes.
  void runNextStep();

protected:
  /// The default hooks (see the file comment).
  void orderMessages(std::vector<Message> &) {}
  void beforeCompute(unsigned) {}
  bool deferKernel(WorkerT &, unsigned) { return false; }
  bool ranAtGemm(const WorkerT &, unsigned) const { return false; }
  void beforeRelease(WorkerT &, unsigned, unsigned, bool) {}
  void endOp(WorkerT &, unsigned, bool) {}
  /// Whether an injected failure's message names the worker (else the
  /// executor's catch does).
  static constexpr bool FailureNamesWorker = true;

  unsigned elementSize(unsigned t) const {
    return getElementSize(plan.tensors[t].type);
  }
  const Box &storedBox(unsigned w, unsigned t) const {
    return *plan.tensors[t].stored[w];
  }
  /// The worker `w` if this engine runs it, else null.
  WorkerT *here(unsigned w) const {
    int k = index[w];
    return k < 0 ? nullptr : locals[k];
  }
  BufferT &ensureStored(WorkerT &worker, unsigned t) {
    BufferT &b = worker.stored[t];
    if (!b)
      b = worker.pool.allocate(storedBox(worker.id, t).getVolume() *
                               elementSize(t));
    return b;
  }

  const ExecutablePlan &plan;
  const Schedule &schedule;
  const Liveness &liveness;

private:
  Derived &derived() { return static_cast<Derived &>(*this); }

  /// One worker's buffers of the op being run.
  struct OpState {
    std::vector<BufferT> inputBuffers;
    std::vector<const unsigned char *> inputData;
    BufferT outTemp;
    unsigned char *outData = nullptr;
    OutputPlace place{false, false};
    bool defer = false;
    /// runNextStep's new parameter values.
    std::vector<std::pair<unsigned, BufferT>> fresh;
  };
  OpState &state(unsigned w) { return states[index[w]]; }

  /// Moves the remote pieces of `pieces` (one phase of op `op`), one
  /// message per (source, destination) pair: the source packs its pieces
  /// into a staging buffer, `transfer` moves it, the destination hands
  /// each piece's packed values to `sink(piece, data)` in schedule order
  /// (the order partial values are combined in, so that every executor's
  /// sums agree bit for bit); both staging buffers are released before
  /// the next message. `source(piece)` is where a sent piece's values are.
  template <typename SizeFn, typename SourceFn, typename SinkFn>
  void movePieces(const std::vector<Piece> &pieces, SizeFn sizeOf,
                  Phase phase, unsigned op, SourceFn source, SinkFn sink);

  void compute(WorkerT &worker, unsigned i);
  void release(WorkerT &worker, unsigned i);
  /// runNextStep's buffer of parameter `param`'s new values on `worker`.
  BufferT &freshBuffer(WorkerT &worker, unsigned param);

  std::vector<WorkerT *> locals;
  /// Per worker id, its index in `locals` and `states`, or -1.
  std::vector<int> index;
  std::vector<OpState> states;
  /// A kernel call's input views and extents, reused op after op.
  std::vector<BoxView> views;
  std::vector<std::vector<std::int64_t>> extents;
  std::vector<std::int64_t> outExtent;
  int failWorker;
  unsigned failOp;
};

template <typename Derived, typename WorkerT, typename BufferT>
template <typename SizeFn, typename SourceFn, typename SinkFn>
void StepEngine<Derived, WorkerT, BufferT>::movePieces(
    const std::vector<Piece> &pieces, SizeFn sizeOf, Phase phase, unsigned op,
    SourceFn source, SinkFn sink) {
  std::vector<Message> messages = getMessages(pieces, sizeOf);
  derived().orderMessages(messages);
  for (const Message &m : messages) {
    WorkerT *from = here(m.src);
    BufferT send;
    if (from) {
      send = from->pool.allocate(m.bytes);
      std::size_t at = 0;
      for (const Piece &piece : pieces) {
        if (piece.src != m.src || piece.dst != m.dst)
          continue;
        Endpoint values = source(piece);
        unsigned size = sizeOf(piece);
        derived().pack(m.src, piece.box, values.data, *values.box,
                       send.data() + at, size);
        at += piece.box.getVolume() * size;
      }
    }
    BufferT receive = derived().transfer(m, phase, op, send);
    if (!here(m.dst))
      continue;
    std::size_t at = 0;
    for (const Piece &piece : pieces) {
      if (piece.src != m.src || piece.dst != m.dst)
        continue;
      sink(piece, static_cast<const unsigned char *>(receive.data()) + at);
      at += piece.box.getVolume() * sizeOf(piece);
    }
  }
}

template <typename Derived, typename WorkerT, typename BufferT>
void StepEngine<Derived, WorkerT, BufferT>::runOp(unsigned i) {
  const OpInfo &op = plan.ops[i];
  const OpSchedule &sched = schedule.ops[i];
  unsigned numInputs = op.inputs.size();

  // Fetch: the input boxes, read in place where a stored box is one.
  for (unsigned k = 0, e = locals.size(); k != e; ++k) {
    WorkerT &worker = *locals[k];
    OpState &s = states[k];
    s.inputBuffers.clear();
    s.inputBuffers.resize(numInputs);
    s.inputData.assign(numInputs, nullptr);
    for (unsigned p = 0; p != numInputs; ++p) {
      unsigned t = op.inputs[p];
      const Box &box = op.workers[worker.id].inputs[p];
      if (box.isEmpty())
        continue;
      if (readsInPlace(plan, i, p, worker.id)) {
        s.inputData[p] = worker.stored[t].data();
        continue;
      }
      s.inputBuffers[p] = worker.pool.allocate(box.getVolume() * elementSize(t));
      s.inputData[p] = s.inputBuffers[p].data();
    }
  }
  for (const Piece &piece : sched.fetch) {
    unsigned w = piece.dst, t = op.inputs[piece.slot];
    WorkerT *worker = piece.src == w ? here(w) : nullptr;
    if (!worker || !state(w).inputBuffers[piece.slot])
      continue;
    derived().copy(w, piece.box, worker->stored[t].data(), storedBox(w, t),
                   state(w).inputBuffers[piece.slot].data(),
                   op.workers[w].inputs[piece.slot], elementSize(t));
  }
  auto inputSize = [&](const Piece &piece) {
    return elementSize(op.inputs[piece.slot]);
  };
  movePieces(
      sched.fetch, inputSize, Fetch, i,
      [&](const Piece &piece) {
        unsigned t = op.inputs[piece.slot];
        return Endpoint{here(piece.src)->stored[t].data(),
                        &storedBox(piece.src, t)};
      },
      [&](const Piece &piece, const unsigned char *packed) {
        derived().unpack(piece.dst, piece.box, packed,
                         state(piece.dst).inputBuffers[piece.slot].data(),
                         op.workers[piece.dst].inputs[piece.slot],
                         inputSize(piece));
      });

  // Compute.
  derived().beforeCompute(i);
  for (WorkerT *worker : locals)
    compute(*worker, i);
  for (OpState &s : states)
    s.inputBuffers.clear();

  // Combine partial values at their roots.
  unsigned o = op.output, outSize = elementSize(o);
  auto outputSize = [&](const Piece &) { return outSize; };
  auto fromOutput = [&](const Piece &piece) {
    return Endpoint{state(piece.src).outData, &op.workers[piece.src].output};
  };
  if (op.partial)
    movePieces(sched.reduce, outputSize, Reduce, i, fromOutput,
               [&](const Piece &piece, const unsigned char *packed) {
                 derived().combine(piece.dst, op.reducer,
                                   plan.tensors[o].type, piece.box, packed,
                                   state(piece.dst).outData,
                                   op.workers[piece.dst].output);
               });

  // Deliver the output to the workers storing it; a next value written in
  // place takes the buffer of what it replaces, whose last reader ran.
  for (WorkerT *worker : locals) {
    unsigned w = worker->id;
    if (!storesBox(plan, o, w))
      continue;
    if (worker->inPlace[o] && !worker->stored[o])
      worker->stored[o] = std::move(worker->stored[plan.tensors[o].updates]);
    ensureStored(*worker, o);
  }
  for (const Piece &piece : sched.deliver) {
    WorkerT *worker = piece.src == piece.dst ? here(piece.src) : nullptr;
    if (!worker || state(piece.src).place.direct)
      continue;
    derived().copy(piece.src, piece.box, state(piece.src).outData,
                   op.workers[piece.src].output, worker->stored[o].data(),
                   storedBox(piece.src, o), outSize);
  }
  movePieces(sched.deliver, outputSize, Deliver, i, fromOutput,
             [&](const Piece &piece, const unsigned char *packed) {
               derived().unpack(piece.dst, piece.box, packed,
                                here(piece.dst)->stored[o].data(),
                                storedBox(piece.dst, o), outSize);
             });
  for (OpState &s : states)
    s.outTemp.reset();

  // Free what no later op reads.
  for (WorkerT *worker : locals)
    release(*worker, i);
}

template <typename Derived, typename WorkerT, typename BufferT>
void StepEngine<Derived, WorkerT, BufferT>::compute(WorkerT &worker,
                                                    unsigned i) {
  const OpInfo &op = plan.ops[i];
  unsigned w = worker.id, numInputs = op.inputs.size();
  if (int(w) == failWorker && i == failOp)
    throw RuntimeError(Derived::FailureNamesWorker
                           ? fmt::format("worker {}: injected failure at "
                                         "op '{}'",
                                         w, op.name)
                           : fmt::format("injected failure at op '{}'",
                                         op.name));
  const OpShare &share = op.workers[w];
  OpState &s = state(w);
  unsigned o = op.output;
  // A next value written over what it replaces is computed aside (the
  // kernel may read the old value), unless the kernel reads that only at
  // the element it writes: then straight into its buffer, which the value
  // takes at delivery (InPlaceUpdates.h).
  s.place = getOutputPlace(plan, i, w, worker.inPlace);
  s.outData = nullptr;
  s.defer = false;
  if (s.place.overReplaced) {
    BufferT &replaced = worker.stored[o]
                            ? worker.stored[o]
                            : worker.stored[plan.tensors[o].updates];
    s.outData = replaced.data();
    ++worker.overwritten;
  } else if (s.place.direct) {
    s.outData = ensureStored(worker, o).data();
    s.defer = derived().deferKernel(worker, i);
  } else if (!share.output.isEmpty()) {
    s.outTemp =
        worker.pool.allocate(share.output.getVolume() * elementSize(o));
    s.outData = s.outTemp.data();
  }
  // The op's kernel may wait for a later op's, or have run already, at
  // its GEMM (Fusion.h).
  if (share.output.isEmpty() || s.defer || derived().ranAtGemm(worker, i))
    return;
  views.resize(numInputs);
  extents.resize(numInputs);
  for (unsigned p = 0; p != numInputs; ++p) {
    const Box &box = share.inputs[p];
    extents[p] = box.getExtents();
    views[p] = BoxView{plan.tensors[op.inputs[p]].type, box.getRank(),
                       const_cast<unsigned char *>(s.inputData[p]),
                       box.lo.data(), extents[p].data()};
  }
  outExtent = share.output.getExtents();
  KernelCall call{views.data(), numInputs,
                  BoxView{plan.tensors[o].type, share.output.getRank(),
                          s.outData, share.output.lo.data(), outExtent.data()},
                  share.iteration.lo.data(), share.iteration.hi.data()};
  derived().launch(worker, i, call);
}

template <typename Derived, typename WorkerT, typename BufferT>
void StepEngine<Derived, WorkerT, BufferT>::release(WorkerT &worker,
                                                    unsigned i) {
  const OpInfo &op = plan.ops[i];
  bool defer = state(worker.id).defer;
  for (unsigned t : op.inputs) {
    if (!liveness.isReleasedAfter(t, i))
      continue;
    derived().beforeRelease(worker, i, t, defer);
    worker.stored[t].reset();
  }
  derived().endOp(worker, i, defer);
  if (liveness.isReleasedAfter(op.output, i))
    worker.stored[op.output].reset();
}

template <typename Derived, typename WorkerT, typename BufferT>
BufferT &StepEngine<Derived, WorkerT, BufferT>::freshBuffer(WorkerT &worker,
                                                            unsigned param) {
  std::vector<std::pair<unsigned, BufferT>> &fresh = state(worker.id).fresh;
  for (auto &entry : fresh)
    if (entry.first == param)
      return entry.second;
  fresh.emplace_back(param,
                     worker.pool.allocateExact(
                         storedBox(worker.id, param).getVolume() *
                         elementSize(param)));
  return fresh.back().second;
}

template <typename Derived, typename WorkerT, typename BufferT>
void StepEngine<Derived, WorkerT, BufferT>::runNextStep() {
  const std::vector<Piece> &pieces = schedule.nextStep;
  // Per worker, the new values of each parameter it stores, built aside so
  // that a parameter is never overwritten while its update still reads it.
  for (OpState &s : states)
    s.fresh.clear();
  // A next value written in place needs neither: its pieces here are its
  // own box, already in the buffer.
  for (const Piece &piece : pieces) {
    unsigned w = piece.dst, param = plan.tensors[piece.slot].updates;
    WorkerT *worker = here(w);
    if (!worker || worker->inPlace[piece.slot])
      continue;
    BufferT &dst = freshBuffer(*worker, param);
    if (piece.src == w)
      derived().copy(w, piece.box, worker->stored[piece.slot].data(),
                     storedBox(w, piece.slot), dst.data(),
                     storedBox(w, param), elementSize(param));
  }
  movePieces(
      pieces, [&](const Piece &piece) { return elementSize(piece.slot); },
      NextStep, plan.ops.size(),
      [&](const Piece &piece) {
        return Endpoint{here(piece.src)->stored[piece.slot].data(),
                        &storedBox(piece.src, piece.slot)};
      },
      [&](const Piece &piece, const unsigned char *packed) {
        unsigned param = plan.tensors[piece.slot].updates;
        derived().unpack(piece.dst, piece.box, packed,
                         freshBuffer(*here(piece.dst), param).data(),
                         storedBox(piece.dst, param), elementSize(param));
      });
  for (unsigned k = 0, e = locals.size(); k != e; ++k)
    for (auto &entry : states[k].fresh)
      locals[k]->stored[entry.first] = std::move(entry.second);
  // The buffers written in place are their parameters' again.
  for (WorkerT *worker : locals)
    for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
      if (worker->inPlace[t] && worker->stored[t])
        worker->stored[plan.tensors[t].updates] =
            std::move(worker->stored[t]);
}

} // namespace detail
} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_LIB_STEPENGINE_H
