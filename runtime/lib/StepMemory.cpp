//===- StepMemory.cpp - What a worker's pool holds during a step ----------===//
//
// This file implements predictPeaks, which replays the executors' allocation
// order (StepMemory.h) for every worker over a FreeList of sizes, from a
// built schedule or op by op from PlanBoxes. Op by op, each worker's
// staging comes from PhaseStaging.h (one destination at a time, grouped
// where an all-gather or a reduce-scatter would list K x K messages) and
// the messages' bytes from the grid rules of MessageGrid.h, once per op
// class (PlanBoxes::getOpClass) and replayed from each worker's record.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/StepMemory.h"
#include "PhaseStaging.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/FreeList.h"
#include "tofu/Runtime/InPlaceUpdates.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

using namespace tofu::runtime;
using namespace tofu::runtime::detail;
using std::int64_t;

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

tofu::runtime::PlanBoxes::~PlanBoxes() = default;

//===----------------------------------------------------------------------===//
// The replay
//===----------------------------------------------------------------------===//

namespace {

/// A worker's share of one op as its pool sees it.
struct ShareMemory {
  /// The input buffers it allocates (boxes not stored as they are), bytes.
  std::vector<std::size_t> inputs;
  /// The computed output box's bytes (0: empty).
  std::size_t output = 0;
  /// Computed into its stored box (a non-partial op storing exactly it).
  bool intoStored = false;
  /// The output's stored box's bytes (0: none).
  std::size_t stored = 0;
  /// Per input position, whether the worker reads its stored box as it is
  /// (readsReplacedPointwise's readsStored).
  std::vector<bool> readsStored;

  bool operator==(const ShareMemory &o) const {
    return inputs == o.inputs && output == o.output &&
           intoStored == o.intoStored && stored == o.stored &&
           readsStored == o.readsStored;
  }
};

/// What `bytes(t, w)` gives: worker w's stored bytes of tensor t (0: none).
using StoredBytesFn = std::function<std::size_t(unsigned t, unsigned w)>;

/// One worker's pool and stored tensors, replayed event by event.
class WorkerReplay {
public:
  WorkerReplay(const ExecutablePlan &plan, const Liveness &liveness,
               const std::vector<TensorMemory> &tensors,
               const StoredBytesFn &storedBytes, unsigned w)
      : plan(&plan), liveness(&liveness), tensors(&tensors),
        storedBytesFn(&storedBytes), w(w), stored(plan.tensors.size(), 0),
        inPlace(plan.tensors.size(), false) {}

  /// Whether this worker writes next value `t` in place (InPlaceUpdates.h).
  void setInPlace(unsigned t, bool value) { inPlace[t] = value; }
  void beginStep();
  /// Op `i` with this worker's `share`; `overReplaced` when it computes
  /// the output straight into the buffer of what it replaces, a next value
  /// written in place (InPlaceUpdates.h, writesOverReplaced).
  void runOp(unsigned i, const ShareMemory &share, bool overReplaced,
             const Staging &fetch, const Staging &reduce,
             const Staging &deliver);
  void runNextStep(const Staging &staging);
  const WorkerPeak &getPeak() const { return peak; }

private:
  std::size_t storedBytes(unsigned t) const { return (*storedBytesFn)(t, w); }
  /// The capacity of a request of `bytes`: a kept buffer of up to 1.5 times
  /// the request may serve it (FreeList.h), the excess counted in slack.
  std::size_t take(std::size_t bytes, MemoryUse use, bool exact = false) {
    std::size_t capacity = exact ? pool.takeExact(bytes) : pool.take(bytes);
    live[unsigned(use)] += int64_t(capacity);
    slack += getSlack(capacity, bytes);
    if (pool.getLiveBytes() > peak.bytes) {
      peak.bytes = pool.getLiveBytes();
      peak.uses = live;
      peak.op = currentOp;
      peak.slack = slack;
    }
    return capacity;
  }
  /// Releases a buffer taken for a request of `bytes`.
  void put(std::size_t &capacity, MemoryUse use, std::size_t bytes) {
    if (!capacity)
      return;
    pool.put(capacity);
    live[unsigned(use)] -= int64_t(capacity);
    slack -= getSlack(capacity, bytes);
    capacity = 0;
  }
  static int64_t getSlack(std::size_t capacity, std::size_t bytes) {
    return int64_t(capacity) - int64_t(std::max<std::size_t>(bytes, 1));
  }
  /// A stored buffer is always taken for storedBytes(t) (moveStored's
  /// tensors store the same box), so that is its request.
  void releaseStored(unsigned t) {
    if (stored[t])
      put(stored[t], (*tensors)[t].use, storedBytes(t));
  }
  void ensureStored(unsigned t) {
    if (!stored[t])
      stored[t] = take(storedBytes(t), (*tensors)[t].use);
  }
  /// ensureStored where the caller has the bytes (`bytes` = storedBytes(t)).
  void ensureStored(unsigned t, std::size_t bytes) {
    if (!stored[t])
      stored[t] = take(bytes, (*tensors)[t].use);
  }
  /// Moves the buffer of tensor `from` to tensor `to` (a next value
  /// written in place and what it replaces), allocating nothing.
  void moveStored(unsigned from, unsigned to) {
    std::size_t capacity = stored[from];
    live[unsigned((*tensors)[from].use)] -= int64_t(capacity);
    live[unsigned((*tensors)[to].use)] += int64_t(capacity);
    stored[to] = capacity;
    stored[from] = 0;
  }
  /// A phase's staging: one message at a time, each buffer released
  /// before the next is allocated.
  void stage(const Staging &staging) {
    for (const Staged &m : staging) {
      std::size_t b = take(m.bytes, m.use);
      put(b, m.use, m.bytes);
    }
  }

  const ExecutablePlan *plan;
  const Liveness *liveness;
  const std::vector<TensorMemory> *tensors;
  const StoredBytesFn *storedBytesFn;
  unsigned w;
  SizeFreeList pool;
  std::array<int64_t, NumMemoryUses> live{};
  WorkerPeak peak;
  int currentOp = -1;
  /// The live buffers' capacity beyond their requests (WorkerPeak::slack).
  int64_t slack = 0;
  /// Per tensor, the capacity of its stored buffer (0: none held).
  std::vector<std::size_t> stored;
  /// runOp's input buffers.
  std::vector<std::size_t> inputs;
  /// Per tensor, a next value this worker writes in place.
  std::vector<bool> inPlace;
};

} // namespace

void WorkerReplay::runOp(unsigned i, const ShareMemory &share,
                         bool overReplaced, const Staging &fetch,
                         const Staging &reduce, const Staging &deliver) {
  const OpInfo &op = plan->ops[i];
  currentOp = int(i);
  inputs.clear();
  for (std::size_t bytes : share.inputs)
    inputs.push_back(take(bytes, MemoryUse::Workspace));
  stage(fetch);
  unsigned o = op.output;
  std::size_t outTemp = 0;
  // A next value written in place is computed aside, or straight into
  // the buffer of what it replaces, then takes that buffer
  // (InPlaceUpdates.h).
  if (share.intoStored && !inPlace[o])
    ensureStored(o, share.stored);
  else if (share.output && !(inPlace[o] && overReplaced))
    outTemp = take(share.output, MemoryUse::Workspace);
  for (unsigned k = 0, e = inputs.size(); k != e; ++k)
    put(inputs[k], MemoryUse::Workspace, share.inputs[k]);
  if (op.partial)
    stage(reduce);
  if (share.stored) {
    if (inPlace[o] && !stored[o])
      moveStored(unsigned(plan->tensors[o].updates), o);
    ensureStored(o, share.stored);
  }
  stage(deliver);
  put(outTemp, MemoryUse::Workspace, share.output);
  for (unsigned t : op.inputs)
    if (liveness->isReleasedAfter(t, i))
      releaseStored(t);
  if (liveness->isReleasedAfter(o, i))
    releaseStored(o);
}

void WorkerReplay::runNextStep(const Staging &staging) {
  // A fresh buffer per parameter it stores, in the order of the updated
  // tensors (buildSchedule's next-step pieces), but for those updated in
  // place, whose buffers become their parameters' again after the staging.
  currentOp = -1;
  std::vector<std::pair<unsigned, std::size_t>> fresh;
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t) {
    int param = plan->tensors[t].updates;
    if (param < 0 || !storedBytes(param) || inPlace[t])
      continue;
    bool have = false;
    for (auto &entry : fresh)
      have |= entry.first == unsigned(param);
    if (!have)
      fresh.emplace_back(param, take(storedBytes(param),
                                     (*tensors)[param].use, /*exact=*/true));
  }
  stage(staging);
  for (auto &[param, buffer] : fresh) {
    releaseStored(param);
    stored[param] = buffer;
  }
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t)
    if (inPlace[t] && stored[t])
      moveStored(t, unsigned(plan->tensors[t].updates));
}

void WorkerReplay::beginStep() {
  currentOp = -1;
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t)
    if (!isHeldAcrossSteps(plan->tensors[t]))
      releaseStored(t);
  pool.beginStep();
  for (unsigned t = 0, e = plan->tensors.size(); t != e; ++t)
    if (plan->tensors[t].graphInput && storedBytes(t))
      ensureStored(t);
  // The executors reset their pools' peaks here; the live bytes now are
  // at most the peak so far, so the running peak is the largest step's.
  pool.resetPeak();
}

namespace {

/// A worker's share as its pool sees it: `stored(t)` is its stored box of
/// tensor t (null: none).
template <typename StoredFn>
void getShareMemory(const ExecutablePlan &plan, unsigned i,
                    const OpShare &share,
                    const std::vector<TensorMemory> &tensors, StoredFn stored,
                    ShareMemory &out) {
  const OpInfo &op = plan.ops[i];
  out.inputs.clear();
  for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
    unsigned t = op.inputs[p];
    const Box &box = share.inputs[p];
    const Box *held = stored(t);
    if (isEmptyBox(box) || (held && !isEmptyBox(*held) && *held == box))
      continue;
    out.inputs.push_back(std::size_t(box.getVolume()) *
                         tensors[t].elementSize);
  }
  const Box *held = stored(op.output);
  out.intoStored = !op.partial && held && !isEmptyBox(*held) &&
                   *held == share.output;
  out.stored = held ? std::size_t(held->getVolume()) *
                          tensors[op.output].elementSize
                    : 0;
  out.output = std::size_t(share.output.getVolume()) *
               tensors[op.output].elementSize;
  out.readsStored.resize(op.inputs.size());
  for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
    const Box *input = stored(op.inputs[p]);
    out.readsStored[p] =
        input && !isEmptyBox(*input) && *input == share.inputs[p];
  }
}

/// Whether a worker with `share` of op `i` computes its output into the
/// buffer of what it replaces, when that next value is written in place.
bool isOverReplaced(const ExecutablePlan &plan, unsigned i,
                    const ShareMemory &share) {
  return share.intoStored && plan.tensors[plan.ops[i].output].updates >= 0 &&
         readsReplacedPointwise(
             plan, i, [&](unsigned p) { return share.readsStored[p]; });
}

void getPointers(const std::vector<std::optional<Box>> &boxes,
                 std::vector<const Box *> &out) {
  out.clear();
  for (const auto &box : boxes)
    out.push_back(box ? &*box : nullptr);
}

/// The stored boxes of the tensors the last few ops read and wrote: an op
/// mostly reads what the ops just before it wrote or read, so most of its
/// tensors' K boxes are not derived and copied again (PlanBoxes::getStored
/// gives the same boxes each time).
class StoredBoxCache {
public:
  /// Starts an op of `tensors` distinct tensors at most: none of the
  /// entries `get` gives during it is replaced until the next begin.
  void begin(unsigned tensors) {
    ++op;
    if (entries.size() < tensors + kSpare)
      entries.resize(tensors + kSpare);
  }
  /// Every worker's stored box of tensor `t` (null: none).
  const std::vector<const Box *> &get(PlanBoxes &boxes, unsigned t) {
    for (Entry &e : entries)
      if (e.tensor == int(t)) {
        e.usedBy = op;
        return e.pointers;
      }
    // The next entry in turn that this op has not asked for.
    while (entries[victim].usedBy == op)
      victim = (victim + 1) % entries.size();
    Entry &e = entries[victim];
    victim = (victim + 1) % entries.size();
    e.tensor = int(t);
    e.usedBy = op;
    boxes.getStored(t, e.boxes);
    getPointers(e.boxes, e.pointers);
    return e.pointers;
  }

private:
  static constexpr unsigned kSpare = 6;
  struct Entry {
    int tensor = -1;
    std::uint64_t usedBy = 0;
    std::vector<std::optional<Box>> boxes;
    std::vector<const Box *> pointers;
  };
  std::vector<Entry> entries;
  std::size_t victim = 0;
  std::uint64_t op = 0;
};

} // namespace

std::vector<WorkerPeak>
tofu::runtime::predictPeaks(const ExecutablePlan &plan,
                            const Schedule &schedule,
                            const std::vector<TensorMemory> &tensors,
                            unsigned steps) {
  Liveness liveness(plan);
  auto storedOf = [&](unsigned t, unsigned w) -> const Box * {
    const auto &box = plan.tensors[t].stored[w];
    return box ? &*box : nullptr;
  };
  auto mine = [](const std::vector<Message> &all, unsigned w) {
    std::vector<Message> out;
    for (const Message &m : all)
      if (m.src == w || m.dst == w)
        out.push_back(m);
    return out;
  };
  auto span = [](const std::vector<Message> &v) {
    return Messages{v.data(), v.data() + v.size()};
  };
  StoredBytesFn storedBytes = [&](unsigned t, unsigned w) {
    const Box *box = storedOf(t, w);
    return box ? std::size_t(box->getVolume()) * tensors[t].elementSize
               : std::size_t(0);
  };
  // The reference form: one replay per worker, every message staged.
  std::vector<WorkerPeak> peaks;
  Staging fetchStaging, reduceStaging, deliverStaging, nextStaging;
  std::vector<bool> candidates = getInPlaceCandidates(
      plan, liveness.getLastUse(),
      [&](unsigned t) { return tensors[t].elementSize; });
  for (unsigned w = 0; w != plan.workers; ++w) {
    WorkerReplay replay(plan, liveness, tensors, storedBytes, w);
    for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
      if (candidates[t])
        replay.setInPlace(
            t, isUpdatedInPlace(plan.tensors[plan.tensors[t].updates].stored[w],
                                plan.tensors[t].stored[w]));
    ShareMemory share;
    for (unsigned s = 0; s != steps; ++s) {
      replay.beginStep();
      for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
        const OpInfo &op = plan.ops[i];
        const OpSchedule &sched = schedule.ops[i];
        getShareMemory(plan, i, op.workers[w], tensors,
                       [&](unsigned t) { return storedOf(t, w); }, share);
        auto inputSize = [&](const Piece &piece) {
          return tensors[op.inputs[piece.slot]].elementSize;
        };
        auto outputSize = [&](const Piece &) {
          return tensors[op.output].elementSize;
        };
        std::vector<Message> fetch = mine(getMessages(sched.fetch, inputSize), w),
                             reduce = mine(getMessages(sched.reduce, outputSize), w),
                             deliver = mine(getMessages(sched.deliver, outputSize), w);
        getEveryStaging(span(fetch), w, fetchStaging);
        getEveryStaging(span(reduce), w, reduceStaging);
        getEveryStaging(span(deliver), w, deliverStaging);
        replay.runOp(i, share, isOverReplaced(plan, i, share), fetchStaging,
                     reduceStaging, deliverStaging);
      }
      std::vector<Message> next = mine(
          getMessages(schedule.nextStep,
                      [&](const Piece &piece) {
                        return tensors[piece.slot].elementSize;
                      }),
          w);
      getEveryStaging(span(next), w, nextStaging);
      replay.runNextStep(nextStaging);
    }
    peaks.push_back(replay.getPeak());
  }
  return peaks;
}

/// True if checkBoxInTensor accepts `box` (checked first, so that its
/// message is formatted only for a box it rejects: K per op otherwise).
static bool isInTensor(const Box &box, const std::vector<int64_t> &shape) {
  if (box.getRank() != shape.size())
    return false;
  if (isEmptyBox(box))
    return true;
  for (unsigned d = 0, e = shape.size(); d != e; ++d)
    if (box.lo[d] < 0 || box.hi[d] > shape[d])
      return false;
  return true;
}

/// validatePlan's rules for one op's shares (computed boxes covering the
/// output, boxes in their tensors).
static void checkShares(const ExecutablePlan &plan, const OpInfo &op,
                        const std::vector<OpShare> &shares, unsigned workers) {
  if (shares.size() != workers)
    throw RuntimeError(fmt::format("op '{}' has {} shares for {} workers",
                                   op.name, shares.size(), workers));
  const TensorInfo &out = plan.tensors[op.output];
  std::vector<const Box *> computed;
  for (unsigned w = 0; w != workers; ++w) {
    const OpShare &share = shares[w];
    auto where = [&] { return fmt::format("op '{}' on worker {}", op.name, w); };
    if (share.inputs.size() != op.inputs.size())
      throw RuntimeError(fmt::format("{} reads {} boxes of {} inputs", where(),
                                     share.inputs.size(), op.inputs.size()));
    for (unsigned p = 0, e = op.inputs.size(); p != e; ++p) {
      const std::vector<int64_t> &shape = plan.tensors[op.inputs[p]].shape;
      if (!isInTensor(share.inputs[p], shape))
        checkBoxInTensor(fmt::format("{}: the box of input {}", where(), p),
                         share.inputs[p], shape);
    }
    if (!isInTensor(share.output, out.shape))
      checkBoxInTensor(where() + ": the output box", share.output, out.shape);
    computed.push_back(&share.output);
  }
  checkBoxesCover(fmt::format("the computed boxes of op '{}'", op.name),
                  computed, out.shape);
}

namespace {

/// One worker's part of an op as its replay takes it.
struct WorkerOp {
  ShareMemory memory;
  Staging fetch, reduce, deliver;

  bool operator==(const WorkerOp &o) const {
    return memory == o.memory && fetch == o.fetch && reduce == o.reduce &&
           deliver == o.deliver;
  }
  std::size_t hash() const {
    std::size_t h = memory.output * 31 + memory.stored * 7 +
                    memory.intoStored;
    auto mix = [&](std::size_t v) { h = h * 1000003 ^ v; };
    for (std::size_t b : memory.inputs)
      mix(b);
    for (bool b : memory.readsStored)
      mix(b);
    for (const Staging *staging : {&fetch, &reduce, &deliver}) {
      mix(staging->size());
      for (const Staged &m : *staging)
        mix(m.bytes * NumMemoryUses + unsigned(m.use));
    }
    return h;
  }
};

/// Every worker's WorkerOp of one op: the distinct ones, kept once, and
/// each worker's index among them (within an op most workers' are equal),
/// so that an op class's records cost 4 bytes per worker.
struct OpRecords {
  std::vector<WorkerOp> distinct;
  std::vector<std::uint32_t> index;

  /// Worker `w`'s record `op` (workers in increasing order, from 0);
  /// `seen` is scratch space, kept from op to op.
  void add(unsigned w, const WorkerOp &op,
           std::unordered_map<std::size_t, std::vector<std::uint32_t>> &seen) {
    if (w == 0) {
      distinct.clear();
      index.clear();
      seen.clear();
    }
    if (w && distinct[index.back()] == op) {
      index.push_back(index.back());
      return;
    }
    std::vector<std::uint32_t> &same = seen[op.hash()];
    for (std::uint32_t k : same)
      if (distinct[k] == op) {
        index.push_back(k);
        return;
      }
    same.push_back(distinct.size());
    index.push_back(distinct.size());
    distinct.push_back(op);
  }
};

/// What an updated tensor gives the replay before the step: whether each
/// worker writes it in place, and its next-step messages.
struct UpdateRecord {
  std::vector<bool> inPlace;
  std::vector<Message> messages;
};

} // namespace

std::vector<WorkerPeak>
tofu::runtime::predictPeaks(const ExecutablePlan &plan, unsigned workers,
                            PlanBoxes &boxes,
                            const std::vector<TensorMemory> &tensors,
                            unsigned steps, std::size_t minRowCells) {
  // Tensors of one class have the same boxes: what depends on their boxes
  // alone is computed for the first of each class.
  std::vector<int> tensorClass;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
    tensorClass.push_back(boxes.getTensorClass(t));
  auto firstOfClass = [](std::vector<bool> &seen, int c) {
    if (c < 0)
      return true;
    if (seen.size() <= unsigned(c))
      seen.resize(c + 1, false);
    if (seen[c])
      return false;
    seen[c] = true;
    return true;
  };
  // validatePlan's tensor rules, one tensor at a time.
  std::vector<std::optional<Box>> stored;
  std::vector<const Box *> pointers;
  std::vector<bool> checkedClasses;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    if (!firstOfClass(checkedClasses, tensorClass[t]))
      continue;
    const TensorInfo &info = plan.tensors[t];
    boxes.getStored(t, stored);
    if (stored.size() != workers)
      throw RuntimeError(fmt::format("tensor '{}' has {} boxes for {} workers",
                                     info.name, stored.size(), workers));
    for (unsigned w = 0; w != workers; ++w)
      if (stored[w] && !isInTensor(*stored[w], info.shape))
        checkBoxInTensor(
            fmt::format("tensor '{}' stored on worker {}", info.name, w),
            *stored[w], info.shape);
    getPointers(stored, pointers);
    checkBoxesCover(fmt::format("the stored boxes of tensor '{}'", info.name),
                    pointers, info.shape);
  }
  Liveness liveness(plan);
  // What the replay takes of a tensor or op with no class is kept as if it
  // had a class of its own: a slot per class, and one per such tensor or
  // op.
  auto getSlot = [](std::vector<int> &classSlot, int c, unsigned &slots,
                    bool &fresh) {
    fresh = true;
    if (c < 0)
      return slots++;
    if (classSlot.size() <= unsigned(c))
      classSlot.resize(c + 1, -1);
    if (classSlot[c] >= 0) {
      fresh = false;
      return unsigned(classSlot[c]);
    }
    classSlot[c] = int(slots);
    return slots++;
  };
  // Every worker's stored bytes of each tensor slot, derived when first
  // asked for.
  std::vector<int> tensorSlotOfClass;
  std::vector<unsigned> tensorSlot;
  unsigned tensorSlots = 0;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    bool fresh;
    tensorSlot.push_back(
        getSlot(tensorSlotOfClass, tensorClass[t], tensorSlots, fresh));
  }
  std::vector<std::vector<std::size_t>> slotBytes(tensorSlots);
  std::vector<std::optional<Box>> slotStored;
  StoredBytesFn storedBytes = [&](unsigned t, unsigned w) {
    std::vector<std::size_t> &bytes = slotBytes[tensorSlot[t]];
    if (bytes.empty()) {
      boxes.getStored(t, slotStored);
      for (const std::optional<Box> &box : slotStored)
        bytes.push_back(
            box ? std::size_t(box->getVolume()) * tensors[t].elementSize : 0);
    }
    return bytes[w];
  };
  // The next step's messages do not change from step to step.
  // Nor which workers write which next values in place. Both are the same
  // for an updated tensor and its parameter of the same classes.
  std::vector<bool> candidates = getInPlaceCandidates(
      plan, liveness.getLastUse(),
      [&](unsigned t) { return tensors[t].elementSize; });
  PairBytes nextBytes, found;
  FetchGrid fetchGrid;
  std::vector<std::optional<Box>> updated;
  std::vector<const Box *> updatedPointers;
  std::map<std::pair<int, int>, unsigned> updateSlotOfClasses;
  std::vector<UpdateRecord> updateRecords;
  std::vector<std::pair<unsigned, unsigned>> updateOf;
  for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t) {
    int param = plan.tensors[t].updates;
    if (param < 0)
      continue;
    unsigned slot = updateRecords.size();
    bool fresh = true;
    if (tensorClass[param] >= 0 && tensorClass[t] >= 0) {
      auto it = updateSlotOfClasses.try_emplace(
          {tensorClass[param], tensorClass[t]}, slot);
      slot = it.first->second;
      fresh = it.second;
    }
    if (fresh) {
      UpdateRecord &record = updateRecords.emplace_back();
      boxes.getStored(param, stored);
      getPointers(stored, pointers);
      boxes.getStored(t, updated);
      record.inPlace.resize(workers);
      for (unsigned w = 0; w != workers; ++w)
        record.inPlace[w] = isUpdatedInPlace(stored[w], updated[w]);
      getPointers(updated, updatedPointers);
      found.clear();
      addFetchedBytes(pointers, updatedPointers, tensors[t].elementSize,
                      kMaxGridCells, found, fetchGrid);
      record.messages = found.found;
    }
    if (candidates[t])
      updateOf.emplace_back(t, slot);
    const std::vector<Message> &messages = updateRecords[slot].messages;
    nextBytes.found.insert(nextBytes.found.end(), messages.begin(),
                           messages.end());
  }
  std::vector<Message> byDst;
  std::vector<std::size_t> start;
  PhaseStaging next, fetch, reduce, deliver;
  next.begin(workers);
  next.addFound(nextBytes, byDst, start);
  // Each input's and the output's stored boxes, kept for the ops after.
  StoredBoxCache storedCache;
  // Per input of an op, its fetch rule; kept from op to op.
  std::vector<FetchGrid> fetchGrids;
  PairBytes reduceBytes, deliverBytes;
  std::vector<std::vector<int64_t>> bounds;
  CellWorkers computers, storers;
  GroupScratch groupScratch;
  FetchStaging fetchPhase(minRowCells);
  std::vector<const Box *> computed;
  std::vector<const std::vector<const Box *> *> storedInputs;
  std::vector<unsigned> inputSizes;
  WorkerOp workerOp;
  std::unordered_map<std::size_t, std::vector<std::uint32_t>> seen;
  // Every worker's part of op `i` into `records`: its share, the boxes it
  // stores, and its staging of each phase.
  auto getRecords = [&](unsigned i, OpRecords &records) {
    const OpInfo &op = plan.ops[i];
    const std::vector<OpShare> &shares = boxes.getShares(i);
    checkShares(plan, op, shares, workers);
    unsigned numInputs = op.inputs.size();
    storedCache.begin(numInputs + 1);
    storedInputs.resize(numInputs);
    inputSizes.clear();
    for (unsigned p = 0; p != numInputs; ++p) {
      storedInputs[p] = &storedCache.get(boxes, op.inputs[p]);
      inputSizes.push_back(tensors[op.inputs[p]].elementSize);
    }
    const std::vector<const Box *> &storedOutput =
        storedCache.get(boxes, op.output);
    // The fetch messages destination by destination (each worker's of
    // every input); reduce and deliver as the delivery rule finds them.
    if (fetchGrids.size() < numInputs)
      fetchGrids.resize(numInputs);
    for (unsigned p = 0; p != numInputs; ++p)
      fetchGrids[p].assign(*storedInputs[p], inputSizes[p], kMaxGridCells);
    fetchPhase.run(shares, fetchGrids, numInputs, workers, fetch);
    computed.resize(workers);
    for (unsigned w = 0; w != workers; ++w)
      computed[w] = &shares[w].output;
    reduceBytes.clear();
    deliverBytes.clear();
    reduce.begin(workers);
    if (!op.partial ||
        !addGroupedReduce(computed, storedOutput,
                          tensors[op.output].elementSize, kMaxGridCells,
                          reduce, deliverBytes, groupScratch)) {
      deliverBytes.clear();
      addDeliveryBytes(computed, storedOutput, tensors[op.output].elementSize,
                       op.partial, kMaxGridCells, reduceBytes, deliverBytes,
                       bounds, computers, storers, fetchGrid);
      reduce.addFound(reduceBytes, byDst, start);
    }
    deliver.begin(workers);
    deliver.addFound(deliverBytes, byDst, start);
    for (unsigned w = 0; w != workers; ++w) {
      getShareMemory(
          plan, i, shares[w], tensors,
          [&](unsigned t) -> const Box * {
            if (t == op.output)
              return storedOutput[w];
            for (unsigned p = 0, n = op.inputs.size(); p != n; ++p)
              if (op.inputs[p] == t)
                return (*storedInputs[p])[w];
            return nullptr;
          },
          workerOp.memory);
      fetch.get(w, workerOp.fetch);
      reduce.get(w, workerOp.reduce);
      deliver.get(w, workerOp.deliver);
      records.add(w, workerOp, seen);
    }
  };
  // Every op's records, op by op (so that a plan's first wrong box is
  // reported): ops of one class have every worker's part equal, derived for
  // the first of the class. Which input reads what the output replaces is
  // each op's own: whether a record writes over it, per op.
  std::vector<int> opSlotOfClass;
  std::vector<OpRecords> slotRecords;
  std::vector<unsigned> opSlot;
  std::vector<std::size_t> overStart;
  std::vector<bool> overReplaced;
  unsigned opSlots = 0;
  for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
    bool fresh;
    unsigned slot = getSlot(opSlotOfClass, boxes.getOpClass(i), opSlots, fresh);
    if (fresh)
      getRecords(i, slotRecords.emplace_back());
    opSlot.push_back(slot);
    overStart.push_back(overReplaced.size());
    for (const WorkerOp &r : slotRecords[slot].distinct)
      overReplaced.push_back(isOverReplaced(plan, i, r.memory));
  }
  // One replay per worker, worker by worker (its pool and buffers stay in
  // the cache): workers differ in the order of their messages as well as
  // in their boxes (on GPT-3 at K = 64 and gpt-2l and ResNet-18 at K = 16
  // and 256 no two workers see the same events).
  std::vector<WorkerPeak> peaks;
  Staging nextStaging;
  for (unsigned w = 0; w != workers; ++w) {
    WorkerReplay replay(plan, liveness, tensors, storedBytes, w);
    for (const auto &[t, slot] : updateOf)
      replay.setInPlace(t, updateRecords[slot].inPlace[w]);
    next.get(w, nextStaging);
    for (unsigned s = 0; s != steps; ++s) {
      replay.beginStep();
      for (unsigned i = 0, e = plan.ops.size(); i != e; ++i) {
        const OpRecords &records = slotRecords[opSlot[i]];
        std::uint32_t k = records.index[w];
        const WorkerOp &r = records.distinct[k];
        replay.runOp(i, r.memory, overReplaced[overStart[i] + k], r.fetch,
                     r.reduce, r.deliver);
      }
      replay.runNextStep(nextStaging);
    }
    peaks.push_back(replay.getPeak());
  }
  return peaks;
}
