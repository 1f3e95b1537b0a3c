//===- StepMemory.cpp - What a worker's pool holds during a step ----------===//
//
// This file implements getMessages, which both executors stage their
// messages by, and predictPeaks, which replays the executors' allocation
// order (StepMemory.h) for one worker at a time over a FreeList of sizes.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/StepMemory.h"
#include "tofu/Runtime/Executor.h"
#include "tofu/Runtime/FreeList.h"

#include <map>

using namespace tofu::runtime;
using std::int64_t;

std::vector<Message> tofu::runtime::getMessages(
    const std::vector<Piece> &pieces,
    const std::function<unsigned(const Piece &)> &elementSize) {
  std::map<std::pair<unsigned, unsigned>, std::size_t> bytes;
  for (const Piece &piece : pieces)
    if (piece.src != piece.dst)
      bytes[{piece.src, piece.dst}] +=
          std::size_t(piece.box.getVolume()) * elementSize(piece);
  std::vector<Message> messages;
  for (const auto &[pair, size] : bytes)
    messages.push_back(Message{pair.first, pair.second, size});
  return messages;
}

const char *tofu::runtime::getMemoryUseName(MemoryUse use) {
  switch (use) {
  case MemoryUse::Parameter: return "parameters";
  case MemoryUse::OptimizerState: return "optimizer state";
  case MemoryUse::Gradient: return "gradients";
  case MemoryUse::Activation: return "activations";
  case MemoryUse::Workspace: return "workspace";
  case MemoryUse::Send: return "send buffers";
  case MemoryUse::Receive: return "receive buffers";
  }
  return "?";
}

namespace {

/// A buffer of the simulated pool.
struct SimBuffer {
  std::size_t capacity = 0;
  MemoryUse use = MemoryUse::Workspace;
  bool live = false;
};

/// One worker's pool and stored tensors, replayed.
class WorkerReplay {
public:
  WorkerReplay(const ExecutablePlan &plan, const Schedule &schedule,
               const std::vector<TensorMemory> &tensors, unsigned w)
      : plan(plan), schedule(schedule), tensors(tensors), w(w),
        stored(plan.tensors.size()), lastUse(computeLastUse(plan)) {}

  void runStep();
  const WorkerPeak &getPeak() const { return peak; }

private:
  struct Empty {};

  SimBuffer allocate(std::size_t bytes, MemoryUse use) {
    SimBuffer b{pool.take(bytes).capacity, use, true};
    live[unsigned(use)] += int64_t(b.capacity);
    if (pool.getLiveBytes() > peak.bytes) {
      peak.bytes = pool.getLiveBytes();
      peak.uses = live;
    }
    return b;
  }
  void release(SimBuffer &b) {
    if (!b.live)
      return;
    pool.put(b.capacity, Empty());
    live[unsigned(b.use)] -= int64_t(b.capacity);
    b.live = false;
  }
  bool stores(unsigned t) const {
    return plan.tensors[t].stored[w] && !plan.tensors[t].stored[w]->isEmpty();
  }
  const Box &storedBox(unsigned t) const { return *plan.tensors[t].stored[w]; }
  std::size_t bytesOf(const Box &box, unsigned t) const {
    return std::size_t(box.getVolume()) * tensors[t].elementSize;
  }
  void ensureStored(unsigned t) {
    if (!stored[t].live)
      stored[t] = allocate(bytesOf(storedBox(t), t), tensors[t].use);
  }
  /// A phase's staging on this worker: one message at a time, each
  /// buffer released before the next is allocated.
  void stage(const std::vector<Piece> &pieces,
             const std::function<unsigned(const Piece &)> &elementSize) {
    for (const Message &m : getMessages(pieces, elementSize)) {
      if (m.src != w && m.dst != w)
        continue;
      SimBuffer b =
          allocate(m.bytes, m.src == w ? MemoryUse::Send : MemoryUse::Receive);
      release(b);
    }
  }
  void runOp(unsigned i);
  void runNextStep();

  const ExecutablePlan &plan;
  const Schedule &schedule;
  const std::vector<TensorMemory> &tensors;
  unsigned w;
  FreeList<Empty> pool;
  std::array<int64_t, NumMemoryUses> live{};
  WorkerPeak peak;
  std::vector<SimBuffer> stored;
  std::vector<int> lastUse;
};

} // namespace

void WorkerReplay::runOp(unsigned i) {
  const OpInfo &op = plan.ops[i];
  const OpShare &share = op.workers[w];
  const OpSchedule &sched = schedule.ops[i];
  std::vector<SimBuffer> inputs;
  for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
    unsigned t = op.inputs[p];
    const Box &box = share.inputs[p];
    if (box.isEmpty() || (stores(t) && storedBox(t) == box))
      continue;
    inputs.push_back(allocate(bytesOf(box, t), MemoryUse::Workspace));
  }
  stage(sched.fetch, [&](const Piece &piece) {
    return tensors[op.inputs[piece.slot]].elementSize;
  });
  unsigned o = op.output;
  SimBuffer outTemp;
  if (!op.partial && stores(o) && storedBox(o) == share.output)
    ensureStored(o);
  else if (!share.output.isEmpty())
    outTemp = allocate(bytesOf(share.output, o), MemoryUse::Workspace);
  for (SimBuffer &b : inputs)
    release(b);
  auto outputSize = [&](const Piece &) { return tensors[o].elementSize; };
  if (op.partial)
    stage(sched.reduce, outputSize);
  if (stores(o))
    ensureStored(o);
  stage(sched.deliver, outputSize);
  release(outTemp);
  for (unsigned t : op.inputs)
    if (lastUse[t] == int(i) && !plan.tensors[t].persistent)
      release(stored[t]);
  if (lastUse[o] <= int(i) && !plan.tensors[o].persistent)
    release(stored[o]);
}

void WorkerReplay::runNextStep() {
  std::vector<std::pair<unsigned, SimBuffer>> fresh;
  for (const Piece &piece : schedule.nextStep) {
    if (piece.dst != w)
      continue;
    unsigned param = plan.tensors[piece.slot].updates;
    bool have = false;
    for (auto &entry : fresh)
      have |= entry.first == param;
    if (!have)
      fresh.emplace_back(param, allocate(bytesOf(storedBox(param), param),
                                         tensors[param].use));
  }
  stage(schedule.nextStep,
        [&](const Piece &piece) { return tensors[piece.slot].elementSize; });
  for (auto &[param, buffer] : fresh) {
    release(stored[param]);
    stored[param] = buffer;
  }
}

void WorkerReplay::runStep() {
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    if (!isHeldAcrossSteps(plan.tensors[t]))
      release(stored[t]);
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    if (plan.tensors[t].graphInput && stores(t))
      ensureStored(t);
  // The executors reset their pools' peaks here; the live bytes now are
  // at most the peak so far, so the running peak is the largest step's.
  pool.resetPeak();
  for (unsigned i = 0, e = plan.ops.size(); i != e; ++i)
    runOp(i);
  runNextStep();
}

std::vector<WorkerPeak>
tofu::runtime::predictPeaks(const ExecutablePlan &plan,
                            const Schedule &schedule,
                            const std::vector<TensorMemory> &tensors,
                            unsigned steps) {
  std::vector<WorkerPeak> peaks;
  for (unsigned w = 0; w != plan.workers; ++w) {
    WorkerReplay replay(plan, schedule, tensors, w);
    for (unsigned s = 0; s != steps; ++s)
      replay.runStep();
    peaks.push_back(replay.getPeak());
  }
  return peaks;
}
