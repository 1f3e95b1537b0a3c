//===- Schedule.h - Who sends which box to whom -----------------*- C++ -*-===//
//
// This file declares the communication schedule of an ExecutablePlan: for
// every op, the pieces each worker fetches of its input boxes, the partial
// pieces sent to a root and the pieces delivered to the workers storing
// the output; after the last op, the pieces that bring each updated
// parameter back into its parameter's layout. Pieces are cells of the grid
// cut by every stored and computed box, so each element is moved exactly as
// often as docs/CostModel.md charges: sum of the remote pieces' bytes is
// the plan's comm_bytes by construction.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_SCHEDULE_H
#define TOFU_RUNTIME_SCHEDULE_H

#include "tofu/Runtime/ExecutablePlan.h"

#include <functional>

namespace tofu {
namespace runtime {

/// One box of a tensor going from worker `src` to worker `dst` (a local copy
/// if they are the same).
struct Piece {
  unsigned src, dst;
  Box box;
  /// Fetch: the input position; next step: the updated tensor. Else 0.
  unsigned slot = 0;
};

/// The pieces of one op, in the order the executor moves them.
struct OpSchedule {
  /// Input pieces into each worker's input boxes.
  std::vector<Piece> fetch;
  /// Partial output pieces to the root that combines them.
  std::vector<Piece> reduce;
  /// Output pieces into each worker's stored box.
  std::vector<Piece> deliver;
};

/// The whole step's pieces.
struct Schedule {
  std::vector<OpSchedule> ops;
  /// Pieces of each updated tensor into its parameter's stored boxes
  /// (`slot` is the updated tensor).
  std::vector<Piece> nextStep;

  /// The one worker whose pieces it holds (buildWorkerSchedule), or -1:
  /// every worker's (buildSchedule).
  int worker = -1;

  /// Bytes of the pieces between distinct workers, per phase and in all.
  std::int64_t fetchBytes = 0, reduceBytes = 0, deliverBytes = 0,
               nextStepBytes = 0;
  std::int64_t getTotalBytes() const {
    return fetchBytes + reduceBytes + deliverBytes + nextStepBytes;
  }
};

/// The bytes worker `src` sends worker `dst` (distinct) in one phase.
struct Message {
  unsigned src, dst;
  std::size_t bytes;
};

/// The messages of `pieces` (a phase of a Schedule), one per pair of
/// distinct workers that exchanges any piece, in increasing (src, dst)
/// order: how both executors move a phase and the peak prediction stages
/// it (StepMemory.h); `elementSize(piece)` is the bytes of one of its elements.
std::vector<Message>
getMessages(const std::vector<Piece> &pieces,
            const std::function<unsigned(const Piece &)> &elementSize);

/// Builds the schedule of `plan` (which validatePlan accepted).
Schedule buildSchedule(const ExecutablePlan &plan);

/// The pieces of buildSchedule(plan) whose source or destination is
/// `worker`, in the same order (so two workers' schedules list the pieces
/// between them alike), with their bytes: what one MPI rank runs. Only
/// `worker`'s boxes are cut into cells (an other worker's box is only
/// intersected with `worker`'s), so time and memory grow with K x ops,
/// not with every worker's cells.
Schedule buildWorkerSchedule(const ExecutablePlan &plan, unsigned worker);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_SCHEDULE_H
