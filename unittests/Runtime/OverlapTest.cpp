//===- OverlapTest.cpp - Receives posted before the kernel, step times ----===//
//
// Tests the executor's overlap (docs/Runtime.md, "Overlap"): each worker
// posts the receives it will take after a kernel (the next op's fetch, the
// op's own reduce and deliver, the next-step pieces) before it runs that
// kernel, through a transport that records every post, receive and kernel
// call per worker; posting moves no pool buffer, so the peaks, bytes and
// values do not depend on it. A worker that getMessages' order has receive
// before it sends takes its sends first where its pool allows, with the
// same peaks and values. And the per-worker times: a worker whose peer's
// kernel is slow waits for it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Executor.h"
#include "tofu/Runtime/FreeList.h"
#include "tofu/Runtime/StepMemory.h"
#include "OneWorkerTransport.h"
#include "TestKernels.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <random>
#include <thread>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

/// What one worker did, in order.
struct Event {
  enum Kind { Post, Receive, Send, Kernel } kind;
  /// The peer: the source of a post or receive, the destination of a send.
  unsigned src = 0;
  std::uint64_t tag = 0;
};

/// One worker's transport (one executor per worker, as under MPI) that
/// records its posts and receives.
class RecordingTransport : public OneWorkerTransport {
public:
  RecordingTransport(Shared &shared, unsigned worker,
                     std::vector<Event> &events)
      : OneWorkerTransport(shared, worker), events(events) {}
  void postReceive(unsigned dst, unsigned src, std::uint64_t tag,
                   std::size_t bytes) override {
    events.push_back(Event{Event::Post, src, tag});
    OneWorkerTransport::postReceive(dst, src, tag, bytes);
  }
  Bytes receive(unsigned dst, unsigned src, std::uint64_t tag) override {
    events.push_back(Event{Event::Receive, src, tag});
    return OneWorkerTransport::receive(dst, src, tag);
  }
  void send(unsigned src, unsigned dst, std::uint64_t tag,
            Bytes payload) override {
    events.push_back(Event{Event::Send, dst, tag});
    OneWorkerTransport::send(src, dst, tag, std::move(payload));
  }

private:
  std::vector<Event> &events;
};

/// Kernels that record each call in a worker's events.
class RecordingKernels : public KernelProvider {
public:
  RecordingKernels(KernelProvider &inner, std::vector<Event> &events)
      : inner(inner), events(events) {}
  void run(unsigned kernel, const KernelCall &call) override {
    events.push_back(Event{Event::Kernel});
    inner.run(kernel, call);
  }

private:
  KernelProvider &inner;
  std::vector<Event> &events;
};

/// Whether every receive of the step (not a gather's, UncountedTag) that
/// follows a kernel call was posted before the last kernel call preceding
/// it; counts those receives in `overlapped`.
bool postedBeforeTheKernel(const std::vector<Event> &events,
                           unsigned &overlapped) {
  overlapped = 0;
  int lastKernel = -1;
  for (int i = 0, e = events.size(); i != e; ++i) {
    const Event &event = events[i];
    if (event.kind == Event::Kernel)
      lastKernel = i;
    if (event.kind != Event::Receive || lastKernel < 0 ||
        (event.tag & UncountedTag))
      continue;
    bool posted = false;
    for (int j = 0; j != lastKernel; ++j)
      posted |= events[j].kind == Event::Post && events[j].src == event.src &&
                events[j].tag == event.tag;
    if (!posted)
      return false;
    ++overlapped;
  }
  return true;
}

KernelTable chainKernels() {
  return KernelTable({KernelInfo{"mm", matmul, nullptr, 3},
                      KernelInfo{"scale", scale, nullptr, 2}});
}

/// Runs two steps of the chain plan at K = 2, one executor per worker, with
/// receives posted `depth` ops ahead and sends first where the pools allow
/// (`sendsFirst`); returns each worker's events of the second step and
/// fills the peaks, the bytes moved, z and each worker's times.
std::vector<std::vector<Event>>
runChain(unsigned depth, std::vector<std::int64_t> &peaks, std::int64_t &moved,
         HostTensor &z, bool sendsFirst = true,
         std::vector<WorkerTimes> *times = nullptr) {
  const unsigned k = 2;
  ExecutablePlan plan = makeChainPlan(k);
  KernelTable table = chainKernels();
  OneWorkerTransport::Shared shared;
  shared.inner = createThreadTransport(k, std::chrono::seconds(10));
  std::vector<std::vector<Event>> events(k);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w != k; ++w)
    threads.emplace_back([&, w] {
      RecordingTransport transport(shared, w, events[w]);
      RecordingKernels kernels(table, events[w]);
      Executor executor(plan, kernels, transport);
      executor.setPrefetchDepth(depth);
      executor.setSendsFirst(sendsFirst);
      executor.setInput(0, iota({M, N}, 0.5f));
      executor.setInput(1, iota({N, P}, 0.25f));
      executor.runStep();
      HostTensor first = executor.gather(5);
      events[w].clear();
      StepResult result = executor.runStep();
      HostTensor second = executor.gather(5);
      if (times)
        (*times)[w] = result.timesPerWorker.at(w);
      if (w == 0) {
        peaks = result.peakBytesPerWorker;
        moved = result.movedBytes;
        z = second;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  return events;
}

TEST(OverlapTest, ReceivesArePostedBeforeTheKernelThatPrecedesThem) {
  std::vector<std::int64_t> peaks;
  std::int64_t moved = 0;
  HostTensor z;
  std::vector<std::vector<Event>> events = runChain(1, peaks, moved, z);
  for (unsigned w = 0; w != 2; ++w) {
    unsigned overlapped = 0;
    EXPECT_TRUE(postedBeforeTheKernel(events[w], overlapped))
        << "worker " << w;
    // The chain's ops 1 and 3 fetch from the other worker, ops 0 and 1
    // deliver to it and op 3 reduces: receives after a kernel.
    EXPECT_GE(overlapped, 3u) << "worker " << w;
    // Every posted receive is taken.
    for (const Event &post : events[w]) {
      if (post.kind != Event::Post)
        continue;
      unsigned taken = 0;
      for (const Event &e : events[w])
        taken += e.kind == Event::Receive && e.src == post.src &&
                 e.tag == post.tag;
      EXPECT_EQ(taken, 1u) << "worker " << w << ", tag " << post.tag;
    }
  }
}

TEST(OverlapTest, WithoutPostingTheCheckFails) {
  std::vector<std::int64_t> peaks;
  std::int64_t moved = 0;
  HostTensor z;
  std::vector<std::vector<Event>> events = runChain(0, peaks, moved, z);
  for (unsigned w = 0; w != 2; ++w) {
    unsigned overlapped = 0;
    EXPECT_FALSE(postedBeforeTheKernel(events[w], overlapped))
        << "worker " << w;
  }
}

TEST(OverlapTest, PostingChangesNoPeakByteOrValue) {
  std::vector<std::int64_t> peaks[3];
  std::int64_t moved[3];
  HostTensor z[3];
  for (unsigned depth = 0; depth != 3; ++depth)
    runChain(depth, peaks[depth], moved[depth], z[depth]);
  ExecutablePlan plan = makeChainPlan(2);
  std::vector<TensorMemory> tensors(plan.tensors.size());
  std::vector<WorkerPeak> predicted =
      predictPeaks(plan, buildSchedule(plan), tensors, 2);
  for (unsigned depth = 0; depth != 3; ++depth) {
    EXPECT_EQ(moved[depth], moved[0]) << "depth " << depth;
    EXPECT_EQ(z[depth].data, z[0].data) << "depth " << depth;
    ASSERT_EQ(peaks[depth].size(), 2u);
    for (unsigned w = 0; w != 2; ++w)
      EXPECT_EQ(peaks[depth][w], predicted[w].bytes)
          << "depth " << depth << ", worker " << w;
  }
  EXPECT_GT(moved[0], 0);
}

/// The phases (tags) of the step in which `events` both send and receive,
/// counting in `sendsFirst` those whose sends all come before their
/// receives.
unsigned countTwoWayPhases(const std::vector<Event> &events,
                           unsigned &sendsFirst) {
  std::map<std::uint64_t, std::pair<int, int>> lastSendFirstReceive;
  for (int i = 0, e = events.size(); i != e; ++i) {
    const Event &event = events[i];
    if (event.tag & UncountedTag)
      continue;
    auto [it, added] = lastSendFirstReceive.try_emplace(event.tag, -1, e);
    if (event.kind == Event::Send)
      it->second.first = i;
    else if (event.kind == Event::Receive)
      it->second.second = std::min(it->second.second, i);
  }
  unsigned twoWay = 0;
  sendsFirst = 0;
  for (const auto &[tag, at] : lastSendFirstReceive) {
    if (at.first < 0 || at.second == int(events.size()))
      continue;
    ++twoWay;
    sendsFirst += at.first < at.second;
  }
  return twoWay;
}

TEST(OverlapTest, AWorkerSendsBeforeItReceivesWithTheSamePeaks) {
  ExecutablePlan plan = makeChainPlan(2);
  std::vector<TensorMemory> tensors(plan.tensors.size());
  std::vector<WorkerPeak> predicted =
      predictPeaks(plan, buildSchedule(plan), tensors, 2);
  HostTensor z[2];
  for (bool on : {true, false}) {
    std::vector<std::int64_t> peaks;
    std::int64_t moved = 0;
    std::vector<WorkerTimes> times(2);
    std::vector<std::vector<Event>> events =
        runChain(1, peaks, moved, z[on], on, &times);
    for (unsigned w = 0; w != 2; ++w) {
      EXPECT_EQ(peaks.at(w), predicted[w].bytes) << "worker " << w;
      unsigned sendsFirst = 0;
      unsigned twoWay = countTwoWayPhases(events[w], sendsFirst);
      // Worker 0 receives only from a higher-numbered worker, so it sends
      // first in getMessages' order too. Worker 1 receives first in that
      // order; with sends first on, its pool lets it send first in every
      // such phase of the chain.
      EXPECT_GE(twoWay, 2u) << "worker " << w;
      if (w == 0 || on) {
        EXPECT_EQ(sendsFirst, twoWay) << "worker " << w;
      } else {
        EXPECT_EQ(sendsFirst, 0u) << "worker " << w;
      }
      std::int64_t reordered = w == 1 && on ? twoWay : 0;
      std::int64_t kept = w == 1 && !on ? twoWay : 0;
      EXPECT_EQ(times[w].sendsFirst, reordered) << "worker " << w;
      EXPECT_EQ(times[w].receivesFirst, kept) << "worker " << w;
    }
  }
  EXPECT_EQ(z[0].data, z[1].data);
}

TEST(FreeListOrderTest, SameInEitherOrderOnlyWhereTheGrantsAgree) {
  FreeList<int> list;
  // A spare of 60 (the last step's), kept buffers of 200 and 1000.
  list.take(60);
  list.put(60, 0);
  list.beginStep();
  list.take(200);
  list.take(1000);
  list.put(200, 0);
  list.put(1000, 0);
  // Each request reuses a kept buffer (1000 is within 1.5 times 700).
  EXPECT_TRUE(list.sameInEitherOrder({150, 700}, {700, 150}));
  // 300 gets a new buffer either way, 150 the kept 200.
  EXPECT_TRUE(list.sameInEitherOrder({300, 150}, {150, 300}));
  // 300 first: its new buffer serves 250 after it. 250 first: each gets
  // a new buffer, so one more is kept afterwards.
  EXPECT_FALSE(list.sameInEitherOrder({300, 250}, {250, 300}));
  // 60 first takes the spare, which then serves 40 as a kept buffer. 40
  // first gets a new buffer (a spare serves only its exact size).
  EXPECT_FALSE(list.sameInEitherOrder({60, 40}, {40, 60}));
  // Asking changes nothing.
  EXPECT_EQ(list.getKept().size(), 2u);
  EXPECT_EQ(list.getSpare().size(), 1u);
  EXPECT_EQ(list.getLiveBytes(), 0);
}

/// The capacities of `entries` (a FreeList's kept buffers or spares).
std::vector<std::size_t>
capacitiesOf(const std::multimap<std::size_t, FreeList<int>::Entry> &entries) {
  std::vector<std::size_t> capacities;
  for (const auto &entry : entries)
    capacities.push_back(entry.first);
  return capacities;
}

/// Takes and puts back each of `sizes` in turn on `list`; returns the
/// largest capacity granted.
std::size_t takeInTurn(FreeList<int> &list,
                       const std::vector<std::size_t> &sizes) {
  std::size_t largest = 0;
  for (std::size_t bytes : sizes) {
    std::size_t capacity = list.take(bytes).capacity;
    largest = std::max(largest, capacity);
    list.put(capacity, 0);
  }
  return largest;
}

TEST(FreeListOrderTest, AgreesWithTakingBothOrdersOnRandomPools) {
  // sameInEitherOrder replays only the buffers in the requests' ranges;
  // its answer must be what taking both orders on copies of the whole
  // list shows.
  std::mt19937 random(19);
  unsigned agreed = 0, differed = 0;
  for (unsigned round = 0; round != 400; ++round) {
    FreeList<int> list;
    std::vector<std::size_t> live;
    // Few sizes, so that requests often find a spare of exactly theirs.
    auto size = [&] { return std::size_t(random() % 12) * 7; };
    for (unsigned step = 0; step != 2; ++step) {
      list.beginStep();
      // A long first step and a short second one: its spares are many,
      // its kept buffers few.
      unsigned n = step == 0 ? 5 + random() % 20 : random() % 6;
      for (unsigned i = 0; i != n; ++i) {
        if (!live.empty() && random() % 3 == 0) {
          list.put(live.back(), 0);
          live.pop_back();
        } else {
          live.push_back(list.take(size()).capacity);
        }
      }
      for (std::size_t capacity : live)
        list.put(capacity, 0);
      live.clear();
    }
    for (unsigned i = 0, n = random() % 6; i != n; ++i)
      live.push_back(list.take(size()).capacity);
    std::vector<std::size_t> first;
    for (unsigned i = 0, n = 1 + random() % 4; i != n; ++i)
      first.push_back(size());
    std::vector<std::size_t> second = first;
    std::shuffle(second.begin(), second.end(), random);
    FreeList<int> a = list, b = list;
    bool same = takeInTurn(a, first) == takeInTurn(b, second) &&
                capacitiesOf(a.getKept()) == capacitiesOf(b.getKept()) &&
                capacitiesOf(a.getSpare()) == capacitiesOf(b.getSpare());
    EXPECT_EQ(list.sameInEitherOrder(first, second), same) << "round " << round;
    ++(same ? agreed : differed);
  }
  // Both answers occur.
  EXPECT_GT(agreed, 40u);
  EXPECT_GT(differed, 10u);
}

/// The chain's kernels, worker 1's matmul `delay` slower (the executor
/// runs each worker on a thread of its own).
class SlowKernels : public KernelProvider {
public:
  SlowKernels(KernelProvider &inner, std::chrono::milliseconds delay)
      : inner(inner), delay(delay) {}
  void run(unsigned kernel, const KernelCall &call) override {
    // Worker 1 computes rows [M/2, M) of the first matmul.
    if (kernel == 0 && call.varLo[0] == M / 2 && call.varHi[1] == P &&
        call.varHi[2] == N)
      std::this_thread::sleep_for(delay);
    inner.run(kernel, call);
  }

private:
  KernelProvider &inner;
  std::chrono::milliseconds delay;
};

TEST(OverlapTest, TimesShowTheWaitForASlowPeer) {
  ExecutablePlan plan = makeChainPlan(2);
  KernelTable table = chainKernels();
  SlowKernels kernels(table, std::chrono::milliseconds(60));
  auto transport = createThreadTransport(2, std::chrono::seconds(10));
  Executor executor(plan, kernels, *transport);
  executor.setInput(0, iota({M, N}, 0.5f));
  executor.setInput(1, iota({N, P}, 0.25f));
  StepResult result = executor.runStep();
  ASSERT_EQ(result.timesPerWorker.size(), 2u);
  const WorkerTimes &fast = result.timesPerWorker[0];
  const WorkerTimes &slow = result.timesPerWorker[1];
  // Worker 1 sleeps in its kernel; worker 0 waits for its delivery of h.
  EXPECT_GE(slow.compute, 0.055);
  EXPECT_GE(fast.wait, 0.04);
  EXPECT_LT(fast.compute, 0.04);
  EXPECT_LT(slow.wait, 0.04);
  for (const WorkerTimes &t : result.timesPerWorker) {
    EXPECT_GE(t.comm, 0.0);
    EXPECT_NEAR(t.compute + t.comm + t.wait, t.step, 1e-6);
  }
}

} // namespace
