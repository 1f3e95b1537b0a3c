//===- StepSimulation.h - A step's workers sharing the cores ----*- C++ -*-===//
//
// This file declares simulateStep, the timing half of the calibrated
// step-time estimate (docs/StepTime.md, "The model"): each worker runs its
// step's actions in the executor's order (computing, moving bytes, sending,
// waiting for a message), and the workers with work to do share the
// machine's cores equally (processor sharing), as the operating system
// shares them among the executor's threads or ranks. A worker waiting for
// a message uses no core; so with more workers than cores, one whose peer
// has no core waits, which a sum of each worker's calls does not see.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_STEPSIMULATION_H
#define TOFU_PLANNER_STEPSIMULATION_H

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace tofu {
namespace planner {

/// One thing a worker does in its step.
struct StepAction {
  enum class Kind : unsigned char {
    /// Run a kernel for `seconds`.
    Compute,
    /// Copy, pack, unpack or hand bytes to the transport for `seconds`.
    Move,
    /// Send message `message` (it arrives a latency later).
    Send,
    /// Wait until message `message` has arrived.
    Receive,
  };
  Kind kind = Kind::Compute;
  /// Compute and Move: the seconds it takes while every worker computes at
  /// once (what tofu-calibrate measures).
  double seconds = 0;
  /// Send and Receive: the message, an index below the simulation's count.
  unsigned message = 0;

  static StepAction compute(double seconds) {
    return {Kind::Compute, seconds, 0};
  }
  static StepAction move(double seconds) { return {Kind::Move, seconds, 0}; }
  static StepAction send(unsigned message) { return {Kind::Send, 0, message}; }
  static StepAction receive(unsigned message) {
    return {Kind::Receive, 0, message};
  }
};

/// The simulated step.
struct SimulatedStep {
  /// When the last worker finished.
  double seconds = 0;
  /// Per worker: when it finished, and the wall seconds of its Compute
  /// actions.
  std::vector<double> finished, computeSeconds;
};

/// Runs `programs` (one per worker) on `cores` cores: at any moment the
/// workers inside a Compute or Move action share the cores equally, each
/// progressing at min(1, cores / running) of a core; an action of `seconds`
/// needs seconds x min(1, cores / workers) core-seconds, so with every
/// worker running it takes its `seconds`. A Send is instant and its message
/// arrives `latency` later; a Receive waits for its message's arrival.
/// Every received message must be sent exactly once, by another worker;
/// a cycle of receives is a bug in the caller (asserts). Time grows with
/// the actions times the workers.
SimulatedStep simulateStep(llvm::ArrayRef<std::vector<StepAction>> programs,
                           unsigned numMessages, unsigned cores,
                           double latency);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_STEPSIMULATION_H
