//===- StepMemoryTest.cpp - The pools' rule and the peak prediction -------===//
//
// Tests FreeList's reuse rule, and that predictPeaks gives, worker by
// worker and byte for byte, the peak the CPU Executor's and the device
// executor's pools measure over one to three steps of the hand-built chain
// plan (a fetch, a partial combination, a delivery to one worker, a
// parameter update moved back) at K = 1, 2 and 4, with its composition;
// and that the form the planner uses at scale (getOpMessages from a grid of
// the boxes, predictPeaks over PlanBoxes, staging the first message of
// each size) gives the schedule's messages and the same peaks as replaying
// every message, on random plans and on an uneven all-gather at K = 16, 32.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/FreeList.h"
#include "tofu/Runtime/StepMemory.h"
#include "BuiltBoxes.h"
#include "ChainExecutors.h"

#include "gtest/gtest.h"

#include <numeric>
#include <random>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

struct Empty {};

TEST(FreeListTest, ReusesTheSmallestFitUpToOneAndAHalfTimesTheRequest) {
  EXPECT_EQ(maxReuseCapacity(1), 1u);
  EXPECT_EQ(maxReuseCapacity(66), 99u);
  EXPECT_EQ(maxReuseCapacity(200), 300u);
  FreeList<Empty> list;
  EXPECT_EQ(list.take(100).capacity, 100u);
  EXPECT_FALSE(list.take(300).reused);
  list.put(100, Empty());
  list.put(300, Empty());
  EXPECT_EQ(list.getLiveBytes(), 0);
  EXPECT_EQ(list.getPeakBytes(), 400);
  // 66: 100 is more than 1.5 times the request (99): a new buffer of 66.
  FreeList<Empty>::Grant g = list.take(66);
  EXPECT_FALSE(g.reused);
  EXPECT_EQ(g.capacity, 66u);
  // 70: the 100-byte buffer is within 1.5 times 70, so it serves the
  // request and counts 100 live bytes.
  g = list.take(70);
  EXPECT_TRUE(g.reused);
  EXPECT_EQ(g.capacity, 100u);
  EXPECT_EQ(list.getLiveBytes(), 166);
  // 199: 300 is more than 1.5 times it: a new buffer of 199.
  g = list.take(199);
  EXPECT_FALSE(g.reused);
  EXPECT_EQ(g.capacity, 199u);
  // 200: exactly 1.5 times is still served by 300.
  EXPECT_EQ(list.take(200).capacity, 300u);
  EXPECT_TRUE(list.getKept().empty());
  EXPECT_EQ(list.getLiveBytes(), 66 + 100 + 199 + 300);
  // A request of 0 bytes is one of 1 byte.
  EXPECT_EQ(list.take(0).capacity, 1u);
  list.resetPeak();
  EXPECT_EQ(list.getPeakBytes(), list.getLiveBytes());
}

// What a pool holds (live buffers and the memory of kept ones and spares)
// never exceeds the most it had live: a request that needs new memory
// first frees kept memory, the smallest buffer that covers the excess,
// else the largest. The trimmed buffer still serves requests under its
// capacity (obtaining its memory again), so no grant changes.
TEST(FreeListTest, TrimsKeptMemoryToTheMostLiveBytes) {
  // A new 300 over a kept 100 would hold 400, more than 300 ever live;
  // without trimming (the default) the pool holds that.
  for (bool trimming : {false, true}) {
    FreeList<Empty> one;
    one.setTrimming(trimming);
    one.put(one.take(100).capacity, Empty());
    one.take(300);
    EXPECT_EQ(one.getHeldBytes(), trimming ? 300 : 400);
    EXPECT_EQ(one.getPeakHeldBytes(), trimming ? 300 : 400);
  }
  FreeList<Empty> list;
  list.setTrimming(true);
  list.take(100);
  list.take(300);
  list.put(100, Empty());
  list.put(300, Empty());
  EXPECT_EQ(list.getHeldBytes(), 400);
  // A new 66 would hold 466 > 400: the kept 100 (the smallest >= 66) goes.
  FreeList<Empty>::Grant g = list.take(66);
  EXPECT_TRUE(g.fresh);
  EXPECT_EQ(list.getHeldBytes(), 66 + 300);
  // 70 still takes the trimmed 100 (its memory new): 466 again, so the
  // 300 goes too (no buffer covers the excess 66 but it).
  g = list.take(70);
  EXPECT_TRUE(g.reused);
  EXPECT_TRUE(g.fresh);
  EXPECT_EQ(g.capacity, 100u);
  EXPECT_EQ(list.getHeldBytes(), 166);
  EXPECT_EQ(list.getPeakHeldBytes(), 400);
  // 200 takes the trimmed 300 and needs no trim (466 live is a new most).
  g = list.take(200);
  EXPECT_TRUE(g.fresh);
  EXPECT_EQ(list.getHeldBytes(), 466);
  // A kept buffer whose memory stayed is reused without new memory.
  list.put(66, Empty());
  g = list.take(60);
  EXPECT_TRUE(g.reused);
  EXPECT_FALSE(g.fresh);
  // Released buffers keep their memory (no trim without a new request).
  list.put(66, Empty());
  list.put(100, Empty());
  list.put(300, Empty());
  EXPECT_EQ(list.getHeldBytes(), 466);
  // Spares count as held; beginStep frees those no request took.
  list.beginStep();
  EXPECT_EQ(list.getHeldBytes(), 466);
  list.beginStep();
  EXPECT_EQ(list.getHeldBytes(), 0);
  // The largest when none covers the excess: kept 10, 20 and 30 (most
  // live 60) and a new 45: excess 45, so the 30 goes, then the 20 covers
  // the 15 left; the 10 stays.
  FreeList<Empty> three;
  three.setTrimming(true);
  for (std::size_t c : {10, 20, 30})
    three.take(c);
  for (std::size_t c : {10, 20, 30})
    three.put(c, Empty());
  three.take(45);
  EXPECT_EQ(three.getHeldBytes(), 45 + 10);
  std::vector<bool> kept;
  for (const auto &entry : three.getKept())
    kept.push_back(entry.second.held);
  EXPECT_EQ(kept, (std::vector<bool>{true, false, false}));
}

/// One step's requests: take 50, release it, take 40 twice, release the
/// first 40, take 60, release the rest. Returns the step's peak.
std::int64_t runSmallStep(FreeList<Empty> &list, bool beginStep) {
  if (beginStep)
    list.beginStep();
  list.resetPeak();
  std::size_t a = list.take(50).capacity;
  list.put(a, Empty());
  std::size_t b = list.take(40).capacity, c = list.take(40).capacity;
  list.put(b, Empty());
  std::size_t d = list.take(60).capacity;
  list.put(c, Empty());
  list.put(d, Empty());
  return list.getPeakBytes();
}

// A step that begins with beginStep reuses as the first one did: the first
// step's 40 served by the released 50 and the second 40 new, peak 40 + 60;
// then, without beginStep, the second step finds the first step's 40 for
// its first 40 and serves the second with the 50: peak 50 + 60.
TEST(FreeListTest, EveryStepReusesAsTheFirst) {
  FreeList<Empty> list;
  EXPECT_EQ(runSmallStep(list, true), 100);
  EXPECT_EQ(runSmallStep(list, true), 100);
  EXPECT_EQ(runSmallStep(list, true), 100);
  FreeList<Empty> unstepped;
  EXPECT_EQ(runSmallStep(unstepped, false), 100);
  EXPECT_EQ(runSmallStep(unstepped, false), 110);
  // Spares serve exact requests only, and beginStep hands back those the
  // step did not take.
  FreeList<Empty> spares;
  spares.put(spares.take(64).capacity, Empty());
  spares.put(spares.take(200).capacity, Empty());
  spares.beginStep();
  FreeList<Empty>::Grant g = spares.take(40);
  EXPECT_FALSE(g.reused);
  EXPECT_EQ(g.capacity, 40u);
  g = spares.takeExact(64);
  EXPECT_TRUE(g.reused);
  EXPECT_EQ(g.capacity, 64u);
  EXPECT_EQ(spares.beginStep().size(), 1u); // The 200 no request took.
}

// SizeFreeList, the peak prediction's pool, grants what FreeList grants:
// random takes (plain and exact), releases and step beginnings over sizes
// that repeat, with equal capacities, live and peak bytes after each call,
// with the pool trimming (every other run) or not.
TEST(FreeListTest, SizeFreeListGrantsWhatFreeListGrants) {
  std::mt19937 rng(7);
  for (unsigned run = 0; run != 20; ++run) {
    FreeList<Empty> list;
    bool trimming = run % 2 == 0;
    list.setTrimming(trimming);
    SizeFreeList sizes;
    std::vector<std::size_t> held;
    unsigned reused = 0;
    std::int64_t mostLive = 0;
    for (unsigned call = 0; call != 2000; ++call) {
      unsigned what = rng() % 10;
      if (what < 4 || held.empty()) {
        // Few distinct sizes (0 included), so that buffers are reused.
        std::size_t bytes = (rng() % 24) * (run % 2 ? 100 : 7);
        bool exact = what == 3;
        FreeList<Empty>::Grant g = exact ? list.takeExact(bytes) : list.take(bytes);
        std::size_t capacity = exact ? sizes.takeExact(bytes) : sizes.take(bytes);
        ASSERT_EQ(capacity, g.capacity) << "run " << run << ", call " << call;
        reused += g.reused;
        held.push_back(capacity);
      } else if (what < 9) {
        std::size_t i = rng() % held.size();
        list.put(held[i], Empty());
        sizes.put(held[i]);
        held.erase(held.begin() + i);
      } else {
        list.beginStep();
        sizes.beginStep();
        if (rng() % 2) {
          list.resetPeak();
          sizes.resetPeak();
        }
      }
      ASSERT_EQ(sizes.getLiveBytes(), list.getLiveBytes());
      ASSERT_EQ(sizes.getPeakBytes(), list.getPeakBytes());
      // Trimming, which SizeFreeList does not replay, changes no grant and
      // keeps what the pool holds within the most it had live.
      mostLive = std::max(mostLive, list.getLiveBytes());
      if (trimming) {
        ASSERT_LE(list.getHeldBytes(), mostLive) << "run " << run;
        ASSERT_LE(list.getPeakHeldBytes(), mostLive) << "run " << run;
      }
    }
    EXPECT_GT(reused, 100u) << "run " << run;
  }
}

TEST(StepMemoryTest, MessagesAreOnePerPairInOrder) {
  std::vector<Piece> pieces = {Piece{1, 0, box({0}, {3})},
                               Piece{0, 1, box({0}, {2})},
                               Piece{1, 1, box({0}, {5})},
                               Piece{1, 0, box({4}, {5})}};
  std::vector<Message> messages =
      getMessages(pieces, [](const Piece &) { return 4u; });
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].src, 0u);
  EXPECT_EQ(messages[0].dst, 1u);
  EXPECT_EQ(messages[0].bytes, 8u);
  EXPECT_EQ(messages[1].src, 1u);
  EXPECT_EQ(messages[1].dst, 0u);
  EXPECT_EQ(messages[1].bytes, 16u);
}

class PredictPeaksTest : public testing::TestWithParam<unsigned> {};

TEST_P(PredictPeaksTest, EqualsWhatBothExecutorsMeasure) {
  unsigned k = GetParam();
  ChainExecutors chain(k);
  const ExecutablePlan &plan = chain.plan;
  Executor &cpu = chain.cpu;
  DeviceExecutor &gpu = chain.gpu;
  // w (tensor 1) is the parameter, w2 its next value; the rest activations.
  std::vector<TensorMemory> tensors(plan.tensors.size());
  tensors[1].use = tensors[4].use = MemoryUse::Parameter;
  std::vector<std::int64_t> cpuPeaks(k, 0), gpuPeaks(k, 0);
  for (unsigned steps = 1; steps <= 3; ++steps) {
    StepResult a = cpu.runStep(), b = gpu.runStep();
    std::vector<WorkerPeak> predicted =
        predictPeaks(plan, cpu.getSchedule(), tensors, steps);
    ASSERT_EQ(predicted.size(), k);
    for (unsigned w = 0; w != k; ++w) {
      cpuPeaks[w] = std::max(cpuPeaks[w], a.peakBytesPerWorker[w]);
      gpuPeaks[w] = std::max(gpuPeaks[w], b.peakBytesPerWorker[w]);
      EXPECT_EQ(predicted[w].bytes, cpuPeaks[w])
          << "worker " << w << ", " << steps << " steps";
      EXPECT_EQ(predicted[w].bytes, gpuPeaks[w])
          << "worker " << w << ", " << steps << " steps";
      const auto &uses = predicted[w].uses;
      EXPECT_EQ(std::accumulate(uses.begin(), uses.end(), std::int64_t(0)),
                predicted[w].bytes);
      // Every worker stores a box of w at its peak.
      EXPECT_GE(uses[unsigned(MemoryUse::Parameter)],
                plan.tensors[1].stored[w]->getVolume() * 4);
      if (k > 1) {
        EXPECT_EQ(uses[unsigned(MemoryUse::Gradient)], 0);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, PredictPeaksTest,
                         testing::Values(1u, 2u, 4u));

/// A random box within `shape` (often empty or whole).
Box randomBox(const std::vector<std::int64_t> &shape, std::mt19937 &rng) {
  Box b = Box::whole(shape);
  for (unsigned d = 0; d != shape.size(); ++d) {
    std::int64_t x = rng() % (shape[d] + 1), y = rng() % (shape[d] + 1);
    if (rng() % 3) {
      b.lo[d] = std::min(x, y);
      b.hi[d] = std::max(x, y);
    }
  }
  return b;
}

/// Boxes of `shape` for k workers that cover it: a grid of uneven parts
/// handed out to the workers in a random order (with replicas when there
/// are more workers than parts), some workers also holding a random box,
/// the whole tensor, or nothing.
std::vector<std::optional<Box>> randomCover(const std::vector<std::int64_t> &shape,
                                            unsigned k, std::mt19937 &rng) {
  std::vector<std::vector<std::int64_t>> cuts(shape.size());
  std::size_t parts = 1;
  for (unsigned d = 0; d != shape.size(); ++d) {
    cuts[d] = {0, shape[d]};
    unsigned n = rng() % 3;
    for (unsigned c = 0; c != n && parts * (c + 2) <= k; ++c)
      cuts[d].push_back(rng() % (shape[d] + 1));
    std::sort(cuts[d].begin(), cuts[d].end());
    parts *= cuts[d].size() - 1;
  }
  std::vector<unsigned> order(k);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::optional<Box>> boxes(k);
  for (unsigned i = 0; i != k; ++i) {
    unsigned w = order[i];
    if (i >= parts && rng() % 4 == 0) {
      unsigned r = rng() % 3;
      if (r == 0)
        boxes[w] = Box::whole(shape);
      else if (r == 1)
        boxes[w] = randomBox(shape, rng);
      continue; // r == 2: nothing
    }
    Box b = Box::whole(shape);
    std::size_t cell = i % parts;
    for (unsigned d = shape.size(); d-- > 0;) {
      std::size_t n = cuts[d].size() - 1;
      b.lo[d] = cuts[d][cell % n];
      b.hi[d] = cuts[d][cell % n + 1];
      cell /= n;
    }
    boxes[w] = b;
  }
  return boxes;
}

/// A random plan: two graph inputs, then ops each reading one or two
/// earlier tensors into a new one; the last op's output updates tensor 1.
ExecutablePlan makeRandomPlan(unsigned k, std::mt19937 &rng) {
  ExecutablePlan plan;
  plan.workers = k;
  auto addTensor = [&](std::vector<std::int64_t> shape) {
    TensorInfo t;
    t.name = "t" + std::to_string(plan.tensors.size());
    t.shape = std::move(shape);
    t.stored = randomCover(t.shape, k, rng);
    t.persistent = rng() % 3 == 0;
    plan.tensors.push_back(std::move(t));
    return unsigned(plan.tensors.size() - 1);
  };
  auto randomShape = [&]() -> std::vector<std::int64_t> {
    unsigned rank = rng() % 3;
    std::vector<std::int64_t> shape;
    for (unsigned d = 0; d != rank; ++d)
      shape.push_back(1 + rng() % 7);
    return shape;
  };
  for (unsigned t = 0; t != 2; ++t) {
    addTensor(randomShape());
    plan.tensors[t].graphInput = true;
    plan.tensors[t].persistent = t == 1 || rng() % 2;
  }
  unsigned ops = 2 + rng() % 4;
  for (unsigned i = 0; i != ops; ++i) {
    OpInfo op;
    op.name = "op" + std::to_string(i);
    unsigned inputs = 1 + rng() % 2;
    for (unsigned p = 0; p != inputs; ++p)
      op.inputs.push_back(rng() % plan.tensors.size());
    bool last = i + 1 == ops;
    op.output = addTensor(last ? plan.tensors[1].shape : randomShape());
    if (last)
      plan.tensors[op.output].updates = 1;
    op.partial = rng() % 2;
    std::vector<std::optional<Box>> computed =
        randomCover(plan.tensors[op.output].shape, k, rng);
    for (unsigned w = 0; w != k; ++w) {
      OpShare share;
      for (unsigned t : op.inputs)
        share.inputs.push_back(randomBox(plan.tensors[t].shape, rng));
      std::size_t rank = plan.tensors[op.output].shape.size();
      share.output = computed[w] ? *computed[w]
                                 : Box{std::vector<std::int64_t>(rank),
                                       std::vector<std::int64_t>(rank)};
      share.iteration = share.output;
      op.workers.push_back(std::move(share));
    }
    plan.ops.push_back(std::move(op));
  }
  return plan;
}

std::vector<const Box *> pointers(const std::vector<std::optional<Box>> &boxes) {
  std::vector<const Box *> out;
  for (const auto &b : boxes)
    out.push_back(b ? &*b : nullptr);
  return out;
}

void expectSameMessages(const std::vector<Message> &a,
                        const std::vector<Message> &b, const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i != a.size(); ++i) {
    EXPECT_EQ(a[i].src, b[i].src) << what << " message " << i;
    EXPECT_EQ(a[i].dst, b[i].dst) << what << " message " << i;
    EXPECT_EQ(a[i].bytes, b[i].bytes) << what << " message " << i;
  }
}

TEST(StepMemoryTest, GridMessagesAndPeaksEqualTheSchedules) {
  std::mt19937 rng(22);
  unsigned plans = 0, moved = 0;
  for (unsigned trial = 0; trial != 400; ++trial) {
    unsigned k = 1 + rng() % 9;
    ExecutablePlan plan = makeRandomPlan(k, rng);
    validatePlan(plan);
    Schedule schedule = buildSchedule(plan);
    std::vector<TensorMemory> tensors(plan.tensors.size());
    for (TensorMemory &t : tensors)
      t.elementSize = 1u << (rng() % 4);
    std::string where = "trial " + std::to_string(trial);
    for (const OpInfo &op : plan.ops) {
      std::vector<std::vector<const Box *>> inputs;
      std::vector<unsigned> sizes;
      for (unsigned t : op.inputs) {
        inputs.push_back(pointers(plan.tensors[t].stored));
        sizes.push_back(tensors[t].elementSize);
      }
      const OpSchedule &sched = schedule.ops[&op - plan.ops.data()];
      auto inSize = [&](const Piece &p) {
        return tensors[op.inputs[p.slot]].elementSize;
      };
      auto outSize = [&](const Piece &) {
        return tensors[op.output].elementSize;
      };
      // The grid, and (0 cells allowed) the scan of buildSchedule's cells.
      for (std::size_t maxCells : {kMaxGridCells, std::size_t(0)}) {
        OpMessages m = getOpMessages(
            op.workers, inputs, sizes, pointers(plan.tensors[op.output].stored),
            tensors[op.output].elementSize, op.partial, maxCells);
        std::string what = where + " " + op.name + " max cells " +
                           std::to_string(maxCells);
        expectSameMessages(m.fetch, getMessages(sched.fetch, inSize),
                           what + " fetch");
        expectSameMessages(m.reduce,
                           op.partial ? getMessages(sched.reduce, outSize)
                                      : std::vector<Message>(),
                           what + " reduce");
        expectSameMessages(m.deliver, getMessages(sched.deliver, outSize),
                           what + " deliver");
        moved += m.fetch.size() + m.reduce.size() + m.deliver.size();
      }
    }
    std::map<std::pair<unsigned, unsigned>, std::size_t> next;
    unsigned updated = plan.tensors.size() - 1;
    addNextStepBytes(pointers(plan.tensors[1].stored),
                     pointers(plan.tensors[updated].stored),
                     tensors[updated].elementSize, next);
    std::vector<Message> nextMessages;
    for (const auto &[pair, bytes] : next)
      nextMessages.push_back(Message{pair.first, pair.second, bytes});
    expectSameMessages(nextMessages,
                       getMessages(schedule.nextStep,
                                   [&](const Piece &p) {
                                     return tensors[p.slot].elementSize;
                                   }),
                       where + " next step");
    for (unsigned steps = 1; steps <= 2; ++steps) {
      BuiltBoxes boxes(plan);
      std::vector<WorkerPeak> a = predictPeaks(plan, schedule, tensors, steps),
                              b = predictPeaks(plan, k, boxes, tensors, steps);
      ASSERT_EQ(a.size(), b.size());
      for (unsigned w = 0; w != k; ++w) {
        EXPECT_EQ(a[w].bytes, b[w].bytes) << where << " worker " << w;
        EXPECT_EQ(a[w].uses, b[w].uses) << where << " worker " << w;
      }
    }
    ++plans;
  }
  EXPECT_EQ(plans, 400u);
  // The random plans move data (the comparison is not of empty lists).
  EXPECT_GT(moved, 1000u);
}

TEST(StepMemoryTest, PlanBoxesAreCheckedAsValidatePlanDoes) {
  ExecutablePlan plan = makeChainPlan(2);
  plan.tensors[2].stored[1].reset(); // h's second half stored nowhere
  BuiltBoxes boxes(plan);
  std::vector<TensorMemory> tensors(plan.tensors.size());
  try {
    predictPeaks(plan, 2, boxes, tensors);
    FAIL() << "an uncovered tensor was accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("stored boxes of tensor 'h'"),
              std::string::npos)
        << e.what();
  }
  ExecutablePlan outside = makeChainPlan(2);
  outside.ops[1].workers[1].output.hi[0] = M + 1; // scale-h past h's rows
  BuiltBoxes outsideBoxes(outside);
  try {
    predictPeaks(outside, 2, outsideBoxes, tensors);
    FAIL() << "a computed box outside its tensor was accepted";
  } catch (const RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "op 'scale-h' on worker 1: the output box"),
              std::string::npos)
        << e.what();
  }
}

} // namespace

/// K workers each storing one of K uneven parts of a vector (parts of
/// `base` and `base + 1` elements, handed out so that the sizes alternate
/// irregularly), all of them reading the whole of it (an all-gather), into
/// a vector each stores a part of.
ExecutablePlan makeUnevenGather(unsigned k) {
  ExecutablePlan plan;
  plan.workers = k;
  std::int64_t n = 3 * k + k / 3 + 1;
  std::vector<std::int64_t> bounds{0};
  for (unsigned w = 0; w != k; ++w)
    bounds.push_back(n * (w + 1) / k);
  auto part = [&](unsigned w) {
    unsigned p = (w * 7 + 3) % k; // a permutation: 7 is prime to k
    return Box{{bounds[p]}, {bounds[p + 1]}};
  };
  for (unsigned t = 0; t != 2; ++t) {
    TensorInfo info;
    info.name = "t" + std::to_string(t);
    info.shape = {n};
    info.graphInput = t == 0;
    info.persistent = t == 0;
    for (unsigned w = 0; w != k; ++w)
      info.stored.push_back(part(w));
    plan.tensors.push_back(std::move(info));
  }
  OpInfo op;
  op.name = "gather";
  op.inputs = {0};
  op.output = 1;
  for (unsigned w = 0; w != k; ++w) {
    OpShare share;
    share.inputs.push_back(Box::whole({n}));
    share.output = part(w);
    share.iteration = share.output;
    op.workers.push_back(std::move(share));
  }
  plan.ops.push_back(std::move(op));
  return plan;
}

TEST(StepMemoryTest, StagingTheFirstMessageOfEachSizeKeepsThePeaks) {
  for (unsigned k : {16u, 32u}) {
    ExecutablePlan plan = makeUnevenGather(k);
    validatePlan(plan);
    Schedule schedule = buildSchedule(plan);
    std::vector<TensorMemory> tensors(plan.tensors.size());
    // Each worker receives messages of both sizes, and not in runs: a
    // size comes back after the other (so staging only the first message
    // of each size skips more than repeats of the message before).
    std::vector<Message> fetch = getMessages(
        schedule.ops[0].fetch, [](const Piece &) { return 4u; });
    unsigned interleaved = 0;
    for (unsigned w = 0; w != k; ++w) {
      std::vector<std::size_t> sizes;
      for (const Message &m : fetch)
        if (m.dst == w && (sizes.empty() || sizes.back() != m.bytes))
          sizes.push_back(m.bytes);
      interleaved += sizes.size() > 2;
    }
    EXPECT_GT(interleaved, k / 2) << "K=" << k;
    BuiltBoxes boxes(plan);
    std::vector<WorkerPeak> every = predictPeaks(plan, schedule, tensors, 2),
                            first = predictPeaks(plan, k, boxes, tensors, 2);
    ASSERT_EQ(every.size(), first.size());
    for (unsigned w = 0; w != k; ++w) {
      EXPECT_EQ(every[w].bytes, first[w].bytes) << "K=" << k << " worker " << w;
      EXPECT_EQ(every[w].uses, first[w].uses) << "K=" << k << " worker " << w;
      // The peak holds the whole gathered vector's input buffer.
      EXPECT_GE(every[w].bytes, plan.tensors[0].getNumElements() * 4);
    }
  }
}
