//===- Executor.cpp - Run an ExecutablePlan on K workers ------------------===//
//
// This file implements the executor: the step of StepEngine.h on each
// local worker, a thread of its own, over a Transport. For every op in
// graph order a worker fills its input boxes (local pieces copied, remote
// pieces unpacked from one message per source), calls the kernel, sends
// its partial pieces to their roots and combines those it roots, delivers
// the output pieces to the workers storing them and frees the tensors
// whose last reader this op was; after the last op it moves updated
// parameters into their parameters' stored boxes. What the CPU adds to the
// engine's policy: each message is staged in a pool buffer on both sides,
// one message at a time, at the points and in the order of the device
// executor (StepMemory.h), but that a worker takes a phase's sends first
// where that leaves its pool's peak the same (orderMessages), so both
// measure the same peak. Messages are tagged with the step, the op and the
// phase; sends never block, so the workers cannot deadlock. Before each
// kernel a worker posts the receives of the next op's fetch and of this
// op's reduce and deliver (Transport::postReceive), so that a transport
// can take them while it computes; that moves no pool buffer. Chains of
// element-wise ops and GEMM epilogues run fused (Fusion.h) with the pool's
// requests of the unfused step. Each worker times its kernels, its waits
// in receive and the rest (WorkerTimes), and traces them on request.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Executor.h"
#include "StepEngine.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Fusion.h"
#include "tofu/Runtime/InPlaceUpdates.h"
#include "tofu/Runtime/MemoryPool.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

using namespace tofu::runtime;
using namespace tofu::runtime::detail;
using std::int64_t;

struct Executor::Worker {
  unsigned id;
  MemoryPool pool;
  /// Per tensor: its stored box's values (empty when not held now).
  std::vector<Buffer> stored;
  /// Per tensor: a next value this worker writes over what it replaces
  /// (InPlaceUpdates.h).
  std::vector<bool> inPlace;
  /// Per op: fused into the next op where this worker's boxes allow
  /// (Executor::setFusion); empty: no fusion.
  std::vector<bool> fusable;
  /// Per op: the GEMM epilogue run at it (findEpiloguesAtGemm), if any.
  std::vector<std::vector<unsigned>> epiloguesAtGemm;
  /// In the current step, the ops whose kernel already ran at their GEMM.
  std::vector<bool> ranAtGemm;
  /// The chains fused in the last step, and the ops in them.
  unsigned fused = 0, fusedOps = 0;
  /// A fused chain's ops, input views and their extents, reused by every
  /// fused call (WorkerStep::runKernel).
  std::vector<ChainOp> chainOps;
  std::vector<bool> chainReadsPrevious;
  std::vector<BoxView> chainInputs;
  std::vector<int64_t> chainExtents;
  /// The next values computed straight into what they replace in the last
  /// step (writesOverReplaced).
  unsigned overwritten = 0;
  /// Where the last step's time went.
  WorkerTimes times;
  /// The last step's spans, when tracing (Executor::setTrace).
  std::vector<TraceEvent> trace;
};

/// One worker's run of one step: the engine over this worker alone, its
/// messages through the transport.
namespace {
class WorkerStep : public StepEngine<WorkerStep, Executor::Worker, Buffer> {
public:
  WorkerStep(const ExecutablePlan &plan, const Schedule &schedule,
             const Liveness &liveness, KernelProvider &kernels,
             Transport &transport, Executor::Worker &worker, unsigned step,
             int failWorker, unsigned failOp, unsigned prefetchDepth,
             bool sendsFirst, bool tracing)
      : StepEngine(plan, schedule, liveness, {&worker}, failWorker, failOp),
        kernels(kernels), transport(transport), worker(worker), w(worker.id),
        step(step), prefetchDepth(prefetchDepth), sendsFirst(sendsFirst),
        tracing(tracing) {}

  void run();

  // The policy (StepEngine.h): Box.h's copies on the host, the kernels
  // timed and fused, the messages through the transport.
  static constexpr bool FailureNamesWorker = false;
  void copy(unsigned, const Box &box, const void *src, const Box &srcBox,
            void *dst, const Box &dstBox, unsigned size) {
    copyRegion(box, src, srcBox, dst, dstBox, size);
  }
  void pack(unsigned, const Box &box, const void *src, const Box &srcBox,
            unsigned char *dst, unsigned size) {
    packRegion(box, src, srcBox, dst, size);
  }
  void unpack(unsigned, const Box &box, const unsigned char *src, void *dst,
              const Box &dstBox, unsigned size) {
    unpackRegion(box, src, dst, dstBox, size);
  }
  void combine(unsigned, Reducer reducer, ElementType type, const Box &box,
               const unsigned char *src, void *dst, const Box &dstBox) {
    reduceRegion(reducer, type, box, src, dst, dstBox);
  }
  void launch(Executor::Worker &, unsigned i, const KernelCall &call);
  /// This worker's messages of a phase, in getMessages' order, or its
  /// sends first where its pool allows (counted in WorkerTimes).
  void orderMessages(std::vector<Message> &messages);
  /// Sends `send` (a copy the transport owns from then on), or receives
  /// the message into a staging buffer.
  Buffer transfer(const Message &m, Phase phase, unsigned op, Buffer &send);
  /// Before op i's kernel: posts op i's reduce and deliver receives and
  /// the fetch receives of the ops up to `prefetchDepth` ahead.
  void beforeCompute(unsigned i);
  /// Whether op i's kernel waits for op i + 1, joining a chain (Fusion.h).
  /// The pool must see the unfused step's releases: an input the chain
  /// still reads that dies before the chain's last op is kept (`held`) and
  /// a buffer of the same capacity no one reads, the fresh output of the
  /// deferred op, released in its place; the kept buffer then stands for
  /// that output, so at the next op it is the output's release that
  /// another fresh output takes, and at the chain's last op the kept
  /// buffer goes where that output's would. So at most one buffer is kept.
  bool deferKernel(Executor::Worker &, unsigned i);
  bool ranAtGemm(const Executor::Worker &, unsigned i) const {
    return worker.ranAtGemm[i];
  }
  /// deferKernel's accounting where op i releases input `t`.
  void beforeRelease(Executor::Worker &, unsigned i, unsigned t, bool defer);
  void endOp(Executor::Worker &, unsigned i, bool defer) {
    if (defer && chainStart < 0)
      chainStart = int(i);
    else if (!defer)
      chainStart = -1;
  }

private:
  std::uint64_t tag(unsigned op, Phase phase) const {
    return makeTag(step, op, phase);
  }

  /// Posts this worker's receives of `pieces` (one phase) under `tag`.
  template <typename SizeFn>
  void postReceives(const std::vector<Piece> &pieces, SizeFn sizeOf,
                    std::uint64_t tag);
  /// Posts the fetch receives of op `i` (the next-step pieces when `i` is
  /// the number of ops).
  void postFetch(unsigned i);

  /// Op i's kernel on `call`, or the chain of the ops deferred before it
  /// with op i's (Fusion.h).
  void runKernel(unsigned i, const KernelCall &call);
  /// Runs the epilogue of GEMM op `g` (`call`: g's) with g, as one kernel
  /// writing the last op's output over what it replaces, where this worker
  /// can (canRunEpilogueAtGemm); false where it cannot.
  bool runEpilogueAtGemm(unsigned g, const KernelCall &call);
  /// The first op of the chain whose kernels wait, or -1.
  int chainStart = -1;
  /// An input the pending chain reads, kept in place of the last deferred
  /// op's output (which was released instead), and that tensor.
  Buffer held;
  int heldTensor = -1;
  /// The input of the op being deferred at whose release its output is
  /// released instead, or -1.
  int releaseOutputAt = -1;

  /// Records a span of op `op` when tracing.
  void record(TraceEvent::Kind kind, unsigned op, unsigned phase,
              unsigned peer, double start, double end) {
    if (tracing)
      worker.trace.push_back(
          TraceEvent{kind, w, op, phase, peer, start, end});
  }

  static double now() {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  KernelProvider &kernels;
  Transport &transport;
  Executor::Worker &worker;
  unsigned w;
  unsigned step;
  unsigned prefetchDepth;
  bool sendsFirst;
  bool tracing;
};
} // namespace

void WorkerStep::orderMessages(std::vector<Message> &all) {
  // One message at a time (StepMemory.h): a send is packed into a staging
  // buffer that is released once the transport has taken its copy; a
  // receive is copied into a staging buffer, unpacked and released. So
  // staging holds at most one message's buffer. Sends never block, so no
  // order deadlocks.
  bool receiveBeforeSend = false;
  auto mine = all.begin();
  for (const Message &m : all) {
    if (m.src != w && m.dst != w)
      continue;
    if (m.src == w && mine != all.begin() && (mine - 1)->dst == w)
      receiveBeforeSend = true;
    *mine++ = m;
  }
  all.erase(mine, all.end());
  // getMessages' order (the order the device executor exchanges in and
  // predictPeaks replays) has this worker receive from lower-numbered
  // workers before it sends, so a peer that sent first would wait for this
  // worker's receive, unpacking and packing before its own message comes.
  // Sends go first instead where the pool grants the staging buffers the
  // same largest capacity and ends the phase with the same buffers in
  // either order, so that the peak, and every later request, are the same.
  if (!receiveBeforeSend)
    return;
  std::vector<Message> ordered = all;
  std::stable_partition(ordered.begin(), ordered.end(),
                        [&](const Message &m) { return m.src == w; });
  auto sizes = [](const std::vector<Message> &list) {
    std::vector<std::size_t> bytes;
    for (const Message &m : list)
      bytes.push_back(m.bytes);
    return bytes;
  };
  if (sendsFirst && worker.pool.sameInEitherOrder(sizes(all), sizes(ordered))) {
    all = std::move(ordered);
    ++worker.times.sendsFirst;
  } else {
    ++worker.times.receivesFirst;
  }
}

Buffer WorkerStep::transfer(const Message &m, Phase phase, unsigned op,
                            Buffer &send) {
  std::uint64_t messageTag = tag(op, phase);
  if (m.src == w) {
    Bytes payload;
    payload.reserve(m.bytes + SendSlackBytes);
    payload.assign(send.data(), send.data() + m.bytes);
    double start = now();
    transport.send(w, m.dst, messageTag, std::move(payload));
    record(TraceEvent::Send, op, phase, m.dst, start, now());
    return Buffer();
  }
  double start = now();
  Bytes message = transport.receive(w, m.src, messageTag);
  double end = now();
  worker.times.wait += end - start;
  record(TraceEvent::Wait, op, phase, m.src, start, end);
  if (message.size() != m.bytes)
    throw RuntimeError(fmt::format(
        "worker {} received {} bytes from worker {} but expected {}", w,
        message.size(), m.src, m.bytes));
  Buffer staging = worker.pool.allocate(m.bytes);
  std::memcpy(staging.data(), message.data(), message.size());
  return staging;
}

template <typename SizeFn>
void WorkerStep::postReceives(const std::vector<Piece> &pieces, SizeFn sizeOf,
                              std::uint64_t tag) {
  for (const Message &m : getMessages(pieces, sizeOf))
    if (m.dst == w)
      transport.postReceive(w, m.src, tag, m.bytes);
}

void WorkerStep::postFetch(unsigned i) {
  if (i == plan.ops.size()) {
    postReceives(
        schedule.nextStep,
        [&](const Piece &piece) { return elementSize(piece.slot); },
        tag(i, NextStep));
    return;
  }
  const OpInfo &op = plan.ops[i];
  postReceives(
      schedule.ops[i].fetch,
      [&](const Piece &piece) { return elementSize(op.inputs[piece.slot]); },
      tag(i, Fetch));
}

void WorkerStep::beforeCompute(unsigned i) {
  if (!prefetchDepth)
    return;
  const OpInfo &op = plan.ops[i];
  auto outputSize = [&](const Piece &) { return elementSize(op.output); };
  if (op.partial)
    postReceives(schedule.ops[i].reduce, outputSize, tag(i, Reduce));
  postReceives(schedule.ops[i].deliver, outputSize, tag(i, Deliver));
  // Op 0 posts ops 1..depth; every later op the one that came into reach.
  unsigned numOps = plan.ops.size();
  for (unsigned j = i == 0 ? 1 : i + prefetchDepth;
       j <= i + prefetchDepth && j <= numOps; ++j)
    postFetch(j);
  transport.progress(w);
}

void WorkerStep::launch(Executor::Worker &, unsigned i,
                        const KernelCall &call) {
  double start = now();
  if (!runEpilogueAtGemm(i, call))
    runKernel(i, call);
  double end = now();
  worker.times.compute += end - start;
  record(TraceEvent::Kernel, i, 0, w, start, end);
}

void WorkerStep::beforeRelease(Executor::Worker &, unsigned i, unsigned t,
                               bool defer) {
  // A deferred op's output is released where the input the chain keeps
  // would be (deferKernel); the kept buffer is released where the last
  // deferred op's output would be.
  int chainInput = i > 0 && chainStart >= 0 ? int(plan.ops[i - 1].output) : -1;
  if (defer && int(t) == releaseOutputAt) {
    if (worker.stored[t]) {
      held = std::move(worker.stored[t]);
      heldTensor = int(t);
    }
    worker.stored[plan.ops[i].output].reset();
    releaseOutputAt = -1;
  } else if (!defer && int(t) == chainInput && held) {
    held.reset();
    heldTensor = -1;
  }
}

bool WorkerStep::deferKernel(Executor::Worker &, unsigned i) {
  if (i >= worker.fusable.size() || !worker.fusable[i] ||
      !canFuseOnWorker(plan, i, w))
    return false;
  // A chain of MaxChainLength ops at most: op i + 1 may end it.
  if (chainStart >= 0 && i + 2 - unsigned(chainStart) > MaxChainLength)
    return false;
  const OpInfo &op = plan.ops[i];
  int chainInput = chainStart >= 0 ? int(plan.ops[i - 1].output) : -1;
  // The buffers the chain keeps past this op's releases: the one already
  // kept (standing for chainInput, released here) and the inputs dying
  // here. One fresh buffer, the output's, can stand in for one of them.
  int keep = held ? chainInput : -1;
  unsigned numKept = held ? 1 : 0;
  for (unsigned t : op.inputs)
    if (int(t) != chainInput && int(t) != keep &&
        liveness.isReleasedAfter(t, i)) {
      keep = int(t);
      ++numKept;
    }
  releaseOutputAt = -1;
  if (numKept == 0)
    return true;
  if (numKept > 1)
    return false;
  const Buffer &kept = held ? held : worker.stored[keep];
  const Buffer &output = worker.stored[op.output];
  if (!kept || !output || kept.capacity() != output.capacity())
    return false;
  releaseOutputAt = keep;
  return true;
}

bool WorkerStep::runEpilogueAtGemm(unsigned g, const KernelCall &call) {
  if (worker.epiloguesAtGemm.empty() || worker.epiloguesAtGemm[g].empty())
    return false;
  const std::vector<unsigned> &ops = worker.epiloguesAtGemm[g];
  if (!canRunEpilogueAtGemm(plan, ops, w, worker.inPlace))
    return false;
  // The call's inputs: g's, then each op's as stored, its reads of the op
  // before's value (never read: the kernel computes it) viewing g's output.
  std::vector<ChainOp> &chain = worker.chainOps;
  std::vector<BoxView> &inputs = worker.chainInputs;
  std::vector<int64_t> &extents = worker.chainExtents;
  chain.clear();
  inputs.assign(call.inputs, call.inputs + call.numInputs);
  std::size_t rankSum = 0;
  for (unsigned k = 1; k != ops.size(); ++k)
    for (const Box &box : plan.ops[ops[k]].workers[w].inputs)
      rankSum += box.getRank();
  extents.resize(rankSum);
  int64_t *extent = extents.data();
  for (unsigned k = 0; k != ops.size(); ++k) {
    const OpInfo &op = plan.ops[ops[k]];
    chain.push_back(ChainOp{op.kernel, unsigned(op.inputs.size()),
                            plan.tensors[op.output].type});
    if (k == 0)
      continue;
    const OpShare &share = op.workers[w];
    unsigned previous = plan.ops[ops[k - 1]].output;
    for (unsigned p = 0; p != op.inputs.size(); ++p) {
      unsigned t = op.inputs[p];
      if (t == previous) {
        inputs.push_back(call.output);
        continue;
      }
      const Box &box = share.inputs[p];
      for (unsigned d = 0; d != box.getRank(); ++d)
        extent[d] = box.getExtent(d);
      inputs.push_back(BoxView{plan.tensors[t].type, box.getRank(),
                               worker.stored[t].data(), box.lo.data(),
                               extent});
      extent += box.getRank();
    }
  }
  const OpInfo &last = plan.ops[ops.back()];
  const OpShare &lastShare = last.workers[w];
  unsigned replaced = unsigned(plan.tensors[last.output].updates);
  Buffer &into = worker.stored[last.output] ? worker.stored[last.output]
                                            : worker.stored[replaced];
  std::vector<int64_t> outExtent = lastShare.output.getExtents();
  KernelCall fused{inputs.data(), unsigned(inputs.size()),
                   BoxView{plan.tensors[last.output].type,
                           lastShare.output.getRank(), into.data(),
                           lastShare.output.lo.data(), outExtent.data()},
                   lastShare.iteration.lo.data(),
                   lastShare.iteration.hi.data()};
  if (!kernels.runFused(chain, fused))
    throw RuntimeError("no kernel for the GEMM epilogue at op '" +
                       plan.ops[g].name + "'");
  ++worker.fused;
  worker.fusedOps += ops.size();
  for (unsigned k = 1; k != ops.size(); ++k)
    worker.ranAtGemm[ops[k]] = true;
  return true;
}

void WorkerStep::runKernel(unsigned i, const KernelCall &call) {
  const OpInfo &op = plan.ops[i];
  if (chainStart < 0) {
    kernels.run(op.kernel, call);
    return;
  }
  // The chain's calls: the deferred ops' inputs as stored (or kept), then
  // op i's.
  std::vector<ChainOp> &ops = worker.chainOps;
  std::vector<bool> &readsPrevious = worker.chainReadsPrevious;
  std::vector<BoxView> &inputs = worker.chainInputs;
  std::vector<int64_t> &extents = worker.chainExtents;
  ops.clear();
  readsPrevious.clear();
  inputs.clear();
  std::size_t rankSum = 0;
  for (unsigned j = chainStart; j < i; ++j)
    for (const Box &box : plan.ops[j].workers[w].inputs)
      rankSum += box.getRank();
  extents.resize(rankSum);
  int64_t *extent = extents.data();
  for (unsigned j = chainStart; j <= i; ++j) {
    const OpInfo &opJ = plan.ops[j];
    int previous = j > unsigned(chainStart) ? int(plan.ops[j - 1].output) : -1;
    ops.push_back(ChainOp{opJ.kernel, unsigned(opJ.inputs.size()),
                          plan.tensors[opJ.output].type});
    for (unsigned p = 0; p != opJ.inputs.size(); ++p)
      readsPrevious.push_back(int(opJ.inputs[p]) == previous);
    if (j == i) {
      inputs.insert(inputs.end(), call.inputs, call.inputs + call.numInputs);
      break;
    }
    const OpShare &share = opJ.workers[w];
    for (unsigned p = 0; p != opJ.inputs.size(); ++p) {
      unsigned t = opJ.inputs[p];
      const Box &box = share.inputs[p];
      for (unsigned d = 0; d != box.getRank(); ++d)
        extent[d] = box.getExtent(d);
      unsigned char *data =
          int(t) == heldTensor ? held.data() : worker.stored[t].data();
      inputs.push_back(BoxView{plan.tensors[t].type, box.getRank(), data,
                               box.lo.data(), extent});
      extent += box.getRank();
    }
  }
  // One generated kernel for the chain where the provider has it (each
  // op's value computed per element in the last op's loop), else blocks.
  KernelCall fused{inputs.data(), unsigned(inputs.size()), call.output,
                   call.varLo, call.varHi};
  ++worker.fused;
  worker.fusedOps += ops.size();
  if (kernels.runFused(ops, fused))
    return;
  // A GEMM's epilogue kernel always runs (emitEpilogueKernel); its GEMM
  // cannot run block by block.
  if (plan.ops[chainStart].workers[w].iteration.getRank() !=
      op.workers[w].output.getRank())
    throw RuntimeError("no kernel for the fused GEMM epilogue at op '" +
                       plan.ops[chainStart].name + "'");
  runFusedBlocks(kernels, ops, readsPrevious, fused,
                 op.workers[w].output.getRank());
}

void WorkerStep::run() {
  worker.ranAtGemm.assign(plan.ops.size(), false);
  worker.fused = 0;
  worker.fusedOps = 0;
  held.reset();
  worker.times = WorkerTimes();
  worker.trace.clear();
  double start = now();
  runOps();
  runNextStep();
  WorkerTimes &times = worker.times;
  times.step = now() - start;
  times.comm = std::max(0.0, times.step - times.compute - times.wait);
}


Executor::Executor(const ExecutablePlan &plan, KernelProvider &kernels,
                   Transport &transport)
    : plan(plan), liveness(plan), kernels(kernels), transport(transport) {
  // A process running one worker (one MPI rank) schedules only its pieces.
  std::vector<unsigned> here = transport.getLocalWorkers();
  schedule = checkAndSchedule(plan, "transport", transport.getNumWorkers(),
                              here.size() == 1 ? int(here[0]) : -1);
  workerById.assign(plan.workers, nullptr);
  for (unsigned w : getLocalWorkers(plan, transport)) {
    workers.push_back(std::make_unique<Worker>());
    workers.back()->id = w;
    workers.back()->stored.resize(plan.tensors.size());
    workers.back()->inPlace =
        getInPlaceUpdates(plan, liveness.getLastUse(), w);
    workers.back()->pool.setTrimming(plan.trimPools);
    workerById[w] = workers.back().get();
  }
  inputs = std::make_unique<InputShards>(plan,
                                         getLocalWorkers(plan, transport));
}

Executor::~Executor() = default;

void Executor::setInput(unsigned t, const HostTensor &value) {
  inputs->setWhole(t, value);
}

void Executor::setInputShard(unsigned t, unsigned w, Bytes values) {
  inputs->setShard(t, w, std::move(values));
}

void Executor::scatterInputs(Worker &worker) {
  inputs->takePending(
      worker.id, [&](unsigned t) { return bool(worker.stored[t]); },
      [&](unsigned t, const Box &, const Bytes &values) {
        if (!worker.stored[t])
          worker.stored[t] = worker.pool.allocate(values.size());
        std::memcpy(worker.stored[t].data(), values.data(), values.size());
      });
}

std::vector<TraceEvent> Executor::getTrace() const {
  std::vector<TraceEvent> events;
  for (const auto &worker : workers)
    events.insert(events.end(), worker->trace.begin(), worker->trace.end());
  return events;
}

void Executor::setFusion(const FusionHints &hints) {
  std::vector<bool> fusable;
  std::vector<std::vector<unsigned>> epilogues;
  if (!hints.elementwise.empty()) {
    fusable = findFusableLinks(plan, schedule, hints, liveness.getLastUse());
    epilogues = findEpiloguesAtGemm(plan, schedule, hints);
  }
  // An epilogue run at its GEMM is in no chain.
  for (const std::vector<unsigned> &ops : epilogues)
    for (unsigned i : ops) {
      fusable[i] = false;
      if (i > 0)
        fusable[i - 1] = false;
    }
  for (auto &worker : workers) {
    worker->fusable = fusable;
    worker->epiloguesAtGemm = epilogues;
  }
}

unsigned Executor::getNumFused() const {
  unsigned n = 0;
  for (auto &worker : workers)
    n += worker->fused;
  return n;
}

unsigned Executor::getNumFusedOps() const {
  unsigned n = 0;
  for (auto &worker : workers)
    n += worker->fusedOps;
  return n;
}

unsigned Executor::getNumDirectUpdates() const {
  unsigned n = 0;
  for (auto &worker : workers)
    n += worker->overwritten;
  return n;
}

StepResult Executor::runStep() {
  for (auto &worker : workers)
    beginWorkerStep(plan, *worker, [&] { scatterInputs(*worker); });
  transport.resetMovedBytes();
  std::mutex errorMutex;
  std::string error;
  auto runWorker = [&](Worker &worker) {
    try {
      WorkerStep(plan, schedule, liveness, kernels, transport, worker, steps,
                 failWorker, failOp, prefetchDepth, sendsFirst, trace)
          .run();
    } catch (const std::exception &e) {
      {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (error.empty())
          error = fmt::format("worker {}: {}", worker.id, e.what());
      }
      transport.fail(worker.id, e.what());
    }
  };
  if (workers.size() == 1) {
    runWorker(*workers[0]);
  } else {
    std::vector<std::thread> threads;
    for (auto &worker : workers)
      threads.emplace_back(runWorker, std::ref(*worker));
    for (std::thread &thread : threads)
      thread.join();
  }
  failWorker = -1;
  ++steps;
  if (!error.empty())
    throw RuntimeError(error);
  std::vector<std::pair<unsigned, int64_t>> peaks, held;
  std::vector<std::pair<unsigned, WorkerTimes>> times;
  for (auto &worker : workers) {
    peaks.emplace_back(worker->id, worker->pool.getPeakBytes());
    held.emplace_back(worker->id, worker->pool.getPeakHeldBytes());
    times.emplace_back(worker->id, worker->times);
  }
  return sumStepResult(transport, plan.workers, transport.getMovedBytes(),
                       peaks, held, times);
}

HostTensor Executor::gather(unsigned t) {
  return gatherTensor(plan, t, transport, steps, [&](unsigned w) {
    return static_cast<const unsigned char *>(
        getHeldBuffer(plan, *workerById[w], t).data());
  });
}

Bytes Executor::readShard(unsigned t, unsigned w) {
  const Buffer &buffer = getShardBuffer(
      plan, w < workerById.size() ? workerById[w] : nullptr, t, w);
  const auto *data = static_cast<const unsigned char *>(buffer.data());
  return Bytes(data, data + plan.tensors[t].stored[w]->getVolume() *
                                getElementSize(plan.tensors[t].type));
}

void Executor::injectFailure(unsigned worker, unsigned op) {
  failWorker = worker;
  failOp = op;
}
