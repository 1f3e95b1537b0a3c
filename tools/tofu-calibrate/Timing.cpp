//===- Timing.cpp - What tofu-calibrate times -----------------------------===//
//
// This file implements the measurements of tofu-calibrate (Timing.h).
//
//===----------------------------------------------------------------------===//

#include "Timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include <time.h>

using namespace tofu;
using Clock = std::chrono::steady_clock;

bool tofu::CpuTimeScale::enabled = false;
double tofu::CpuTimeScale::factor = 1;

static double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

namespace {

int64_t volume(const std::vector<int64_t> &shape) {
  int64_t v = 1;
  for (int64_t e : shape)
    v *= e;
  return v;
}

/// One thread's tensors and call.
struct Call {
  std::vector<std::vector<float>> inputs;
  std::vector<float> output;
  std::vector<std::vector<int64_t>> lo;
  std::vector<runtime::BoxView> views;
  std::vector<int64_t> outLo, varLo, varHi;
  runtime::KernelCall call;

  /// Random inputs, or `like`'s values.
  Call(const KernelShape &shape, std::mt19937 &rng, const Call *like) {
    std::uniform_real_distribution<float> dist(-1, 1);
    unsigned n = shape.inputs.size();
    inputs.resize(n);
    lo.resize(n);
    for (unsigned i = 0; i != n; ++i) {
      if (like) {
        inputs[i] = like->inputs[i];
      } else {
        inputs[i].resize(volume(shape.inputs[i]));
        for (float &x : inputs[i])
          x = dist(rng);
      }
      lo[i].assign(shape.inputs[i].size(), 0);
      views.push_back({runtime::ElementType::F32,
                       unsigned(shape.inputs[i].size()), inputs[i].data(),
                       lo[i].data(), shape.inputs[i].data()});
    }
    output.assign(volume(shape.output), 0);
    outLo.assign(shape.output.size(), 0);
    varLo.assign(shape.varExtents.size(), 0);
    varHi = shape.varExtents;
    call = {views.data(),
            n,
            {runtime::ElementType::F32, unsigned(shape.output.size()),
             output.data(), outLo.data(), shape.output.data()},
            varLo.data(),
            varHi.data()};
  }
};

/// Seconds of CPU the calling thread has used.
static double threadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// Runs `body(thread)` on `threads` threads started together; returns the
/// slowest thread's seconds.
template <typename Fn> double together(unsigned threads, Fn body) {
  std::atomic<unsigned> ready{0};
  std::vector<double> seconds(threads, 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t != threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() != threads)
        std::this_thread::yield();
      if (CpuTimeScale::enabled) {
        double start = threadCpuSeconds();
        body(t);
        seconds[t] = (threadCpuSeconds() - start) * CpuTimeScale::factor;
        return;
      }
      auto start = Clock::now();
      body(t);
      seconds[t] = secondsSince(start);
    });
  for (std::thread &thread : pool)
    thread.join();
  return *std::max_element(seconds.begin(), seconds.end());
}

} // namespace

double tofu::timeKernel(runtime::KernelFn fn, const KernelShape &shape,
                        unsigned threads, double roundSeconds,
                        const ProcessRounds *processes) {
  std::mt19937 rng(1);
  // Per thread, copies of the call's tensors that consecutive calls
  // rotate through: as many as make the copies' bytes reach
  // ColdWorkingSetBytes (at most MaxCopies), so that a call whose tensors
  // outgrow the core's cache reads them from memory, as in a training
  // step, where an op's large inputs were produced many ops before.
  double bytes = double(volume(shape.output));
  for (const auto &input : shape.inputs)
    bytes += double(volume(input));
  bytes *= sizeof(float);
  unsigned copies =
      bytes > double(HotCallBytes)
          ? unsigned(std::clamp(double(ColdWorkingSetBytes) / bytes, 1.0,
                                double(MaxCopies)))
          : 1;
  std::vector<std::vector<std::unique_ptr<Call>>> calls(threads);
  for (unsigned t = 0; t != threads; ++t)
    for (unsigned c = 0; c != copies; ++c)
      calls[t].push_back(std::make_unique<Call>(shape, rng, c ? calls[t][0].get() : nullptr));
  // One call alone (warming the BLAS threads) sizes the rounds.
  auto start = Clock::now();
  fn(calls[0][0]->call);
  double once = std::max(secondsSince(start), 1e-9);
  if (processes) // The same number of calls per round in every process.
    once = processes->max(once);
  unsigned repeats = unsigned(std::clamp(roundSeconds / once, 1.0, 1e5));
  // The best of 7 rounds: on a loaded machine, the rounds that other jobs
  // left the cores to (tofu-run's step_seconds is its best step, too).
  double best = 0;
  for (unsigned round = 0; round != KernelRounds; ++round) {
    if (processes)
      processes->barrier();
    double seconds = together(threads, [&](unsigned t) {
      for (unsigned r = 0; r != repeats; ++r)
        fn(calls[t][r % copies]->call);
    });
    if (processes)
      seconds = processes->max(seconds);
    best = round ? std::min(best, seconds / repeats) : seconds / repeats;
  }
  return best;
}

double tofu::timeMemoryCopy(unsigned threads) {
  const size_t bytes = size_t(64) << 20;
  std::vector<std::vector<char>> from(threads, std::vector<char>(bytes, 1)),
      to(threads, std::vector<char>(bytes, 0));
  double best = 0;
  for (unsigned round = 0; round != 3; ++round) {
    double seconds = together(threads, [&](unsigned t) {
      std::memcpy(to[t].data(), from[t].data(), bytes);
    });
    best = round ? std::min(best, seconds) : seconds;
  }
  return double(bytes) / best;
}

double tofu::timeRoundTrip(runtime::Transport &transport, unsigned self,
                           unsigned peer, bool first, size_t bytes,
                           unsigned trips, uint64_t tag) {
  auto start = Clock::now();
  for (unsigned i = 0; i != trips; ++i) {
    if (first) {
      transport.send(self, peer, tag + 2 * i, runtime::Bytes(bytes, 1));
      transport.receive(self, peer, tag + 2 * i + 1);
    } else {
      runtime::Bytes got = transport.receive(self, peer, tag + 2 * i);
      transport.send(self, peer, tag + 2 * i + 1, std::move(got));
    }
  }
  return secondsSince(start) / trips;
}
