//===- StepSimulation.cpp - A step's workers sharing the cores ------------===//
//
// This file implements simulateStep (StepSimulation.h): an event loop over
// the workers' actions under processor sharing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/StepSimulation.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace tofu;
using namespace tofu::planner;

SimulatedStep
planner::simulateStep(llvm::ArrayRef<std::vector<StepAction>> programs,
                      unsigned numMessages, unsigned cores, double latency) {
  constexpr double never = std::numeric_limits<double>::infinity();
  unsigned numWorkers = programs.size();
  SimulatedStep result;
  result.finished.assign(numWorkers, 0);
  result.computeSeconds.assign(numWorkers, 0);
  if (numWorkers == 0)
    return result;
  // The core-seconds of one action-second: with every worker running, each
  // has min(1, cores / workers) of a core.
  double share = std::min(1.0, double(std::max(cores, 1u)) / numWorkers);
  std::vector<double> arrival(numMessages, never);
  std::vector<size_t> next(numWorkers, 0);
  // Core-seconds left of each worker's current Compute or Move action.
  std::vector<double> left(numWorkers, -1);
  std::vector<unsigned> running;
  double now = 0;
  for (;;) {
    // Take every action that is instant now; a Send can release a Receive
    // of a worker already looked at, so repeat until nothing moves.
    for (bool moved = true; moved;) {
      moved = false;
      for (unsigned w = 0; w != numWorkers; ++w) {
        const std::vector<StepAction> &program = programs[w];
        while (next[w] != program.size()) {
          const StepAction &action = program[next[w]];
          if (action.kind == StepAction::Kind::Send) {
            assert(arrival[action.message] == never && "message sent twice");
            arrival[action.message] = now + latency;
          } else if (action.kind == StepAction::Kind::Receive) {
            if (arrival[action.message] > now)
              break;
          } else {
            if (left[w] < 0)
              left[w] = action.seconds * share;
            if (left[w] > 0)
              break;
            left[w] = -1;
          }
          ++next[w];
          moved = true;
          if (next[w] == program.size())
            result.finished[w] = now;
        }
      }
    }
    // The workers with work, and the next moment something changes: a
    // running action ends or a waited-for message arrives.
    running.clear();
    double until = never;
    for (unsigned w = 0; w != numWorkers; ++w) {
      if (next[w] == programs[w].size())
        continue;
      const StepAction &action = programs[w][next[w]];
      if (action.kind == StepAction::Kind::Receive)
        until = std::min(until, arrival[action.message]);
      else
        running.push_back(w);
    }
    if (running.empty() && until == never) {
      assert(std::all_of(next.begin(), next.end(),
                         [&, w = 0u](size_t n) mutable {
                           return n == programs[w++].size();
                         }) &&
             "workers wait for messages nobody sends");
      break;
    }
    double rate = std::min(1.0, double(std::max(cores, 1u)) / running.size());
    for (unsigned w : running)
      until = std::min(until, now + left[w] / rate);
    double elapsed = until - now;
    for (unsigned w : running) {
      // The action that ends now ends exactly (no rounding residue).
      left[w] = now + left[w] / rate <= until ? 0 : left[w] - elapsed * rate;
      if (programs[w][next[w]].kind == StepAction::Kind::Compute)
        result.computeSeconds[w] += elapsed;
    }
    now = until;
  }
  result.seconds =
      *std::max_element(result.finished.begin(), result.finished.end());
  return result;
}
