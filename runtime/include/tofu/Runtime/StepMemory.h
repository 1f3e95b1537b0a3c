//===- StepMemory.h - What a worker's pool holds during a step --*- C++ -*-===//
//
// This file declares the runtime's memory rule and its prediction. Both
// executors (Executor.h, DeviceExecutor.h) allocate a worker's buffers from
// its pool in one order, op by op:
//  1. the input boxes it does not store as they are (workspace);
//  2. the fetch messages' staging: per pair of distinct workers in
//     increasing (source, destination) order (getMessages), one message
//     at a time: a send buffer on the source (released once sent) and a
//     receive buffer on the destination (released once its pieces are
//     unpacked), so staging holds at most one message's buffer;
//  3. the output: into its stored box when it stores exactly the computed
//     box of a non-partial op and the output is not a next value written
//     in place (InPlaceUpdates.h); a next value written in place whose
//     producer reads what it replaces only pointwise, into that buffer
//     (writesOverReplaced: nothing allocated); else a workspace buffer of
//     the computed box; then the input buffers are released;
//  4. partial ops: the reduce messages' staging;
//  5. the stored box of the output (if not yet held; a next value written
//     in place takes the buffer of what it replaces), then the deliver
//     messages' staging; then the output's workspace is released;
//  6. the stored tensors whose last reader or writer this op was, unless
//     persistent (ExecutablePlan.h), are released (Liveness.h).
// After the last op, the next values of the parameters it stores and did
// not write in place (one buffer each, in the order of the next-step
// pieces), the next-step messages' staging, then each such parameter's old
// buffer is released and the buffers written in place are their
// parameters' again. The
// step's results (outputs, next values) stay held for gather until the
// next step starts; then every tensor but the persistent graph inputs
// (parameters, state) is released, the graph inputs it stores and does not
// hold are allocated in tensor order, and the peak is reset. Every buffer
// goes through the pool's FreeList (FreeList.h).
//
// predictPeaks replays that order over a SizeFreeList (FreeList's rule over
// sizes alone, in flat arrays: FreeList.h): the peak
// each worker's pool measures in a fresh executor's first steps, and what
// its buffers held at that peak. The planner's peak_bytes_per_worker is
// this prediction (docs/CostModel.md). It comes in two forms with one
// replay: over a built plan and its Schedule (small K, tests: every message
// staged, the reference), and over a
// plan whose boxes are produced one op at a time (PlanBoxes), with each
// phase's messages counted from a grid of the boxes (getOpMessages) in
// time linear in the cells moved rather than K per cell, and only the
// first message of each size staged per phase (a later one of that size
// reuses the same buffer at the same live bytes), each worker's staging
// gathered destination by destination without sorting or listing the
// messages per worker (an all-gather's K x K messages cost an addition and
// a comparison each): the form the planner uses at thousands of workers.
// There, ops of one class (PlanBoxes::getOpClass: the same boxes on every
// worker, GPT-3's 96 identical layers) are derived, checked and staged
// once: the first op of a class keeps each worker's part (its buffers'
// sizes and its staging of each phase) as the distinct parts and a 32-bit
// index per worker, and every later op of the class is replayed from them.
// Tensors of one class (getTensorClass) are checked, and their bytes per
// worker derived, once. With every op's records made (in op order, so
// that the first wrong box is reported), the replay runs worker by
// worker, one worker's pool alive at a time.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_STEPMEMORY_H
#define TOFU_RUNTIME_STEPMEMORY_H

#include "tofu/Runtime/Liveness.h"
#include "tofu/Runtime/Schedule.h"

#include <array>
#include <functional>
#include <map>

namespace tofu {
namespace runtime {

/// What a buffer of a worker's pool holds.
enum class MemoryUse : std::uint8_t {
  /// Stored parameters and their next values.
  Parameter,
  /// Stored optimizer state and its next values.
  OptimizerState,
  /// Stored gradients.
  Gradient,
  /// Every other stored tensor: inputs, activations kept for the backward
  /// pass, outputs.
  Activation,
  /// An op's input boxes and computed output box.
  Workspace,
  /// Send staging.
  Send,
  /// Receive staging.
  Receive,
};
constexpr unsigned NumMemoryUses = 7;
/// "parameters", "optimizer state", ...
const char *getMemoryUseName(MemoryUse use);

/// One worker's predicted peak and the bytes of each use at that moment.
struct WorkerPeak {
  std::int64_t bytes = 0;
  std::array<std::int64_t, NumMemoryUses> uses{};
  /// The op the worker was running (an index into the plan's ops), or -1
  /// between ops (the next step's exchange, the step's graph inputs).
  int op = -1;
  /// Of `bytes`, the capacity of the live buffers beyond their requests:
  /// the pool serves a request with a kept buffer of up to 1.5 times its
  /// size (FreeList.h), and counts the buffer's capacity.
  std::int64_t slack = 0;
};

/// Per tensor of a plan, what predictPeaks needs besides the plan.
struct TensorMemory {
  unsigned elementSize = 4;
  MemoryUse use = MemoryUse::Activation;
};

/// The peak each worker's pool reaches over the first `steps` steps of a
/// fresh executor of `plan` (schedule `schedule`), given every graph input
/// before the first step and none after. `tensors` gives each tensor's
/// element size and use.
std::vector<WorkerPeak> predictPeaks(const ExecutablePlan &plan,
                                     const Schedule &schedule,
                                     const std::vector<TensorMemory> &tensors,
                                     unsigned steps = 1);

/// The messages of one op's phases (getMessages of buildSchedule's fetch,
/// reduce and deliver pieces), counted per cell of the grid cut by the
/// stored and computed boxes: each cell's source follows the schedule's
/// rules (Schedule.cpp) without scanning every worker per cell.
struct OpMessages {
  std::vector<Message> fetch, reduce, deliver;
};
/// `shares` are the op's boxes per worker; `storedInputs[p]` the stored
/// boxes of input p per worker (null: none) and `inputElementSizes[p]` its
/// element size; likewise for the output. The boxes must be in their
/// tensors and the stored (and computed) boxes must cover them
/// (validatePlan). A grid of more than `maxGridCells` cells is not built:
/// its cells are scanned worker by worker, as buildSchedule does.
constexpr std::size_t kMaxGridCells = std::size_t(1) << 24;
OpMessages getOpMessages(const std::vector<OpShare> &shares,
                         const std::vector<std::vector<const Box *>> &storedInputs,
                         const std::vector<unsigned> &inputElementSizes,
                         const std::vector<const Box *> &storedOutput,
                         unsigned outputElementSize, bool partial,
                         std::size_t maxGridCells = kMaxGridCells);
/// The next-step messages of one updated tensor stored as `updated` into
/// its parameter stored as `param` (per worker), as buildSchedule's
/// nextStep pieces; added to `bytes` per (src, dst).
void addNextStepBytes(const std::vector<const Box *> &param,
                      const std::vector<const Box *> &updated,
                      unsigned elementSize,
                      std::map<std::pair<unsigned, unsigned>, std::size_t> &bytes,
                      std::size_t maxGridCells = kMaxGridCells);

/// A plan's per-worker boxes, produced when asked, so that a plan of many
/// workers is never held whole.
class PlanBoxes {
public:
  virtual ~PlanBoxes();
  /// Every worker's stored box of tensor `t` into `out`, one per worker
  /// (nullopt: it stores none); the boxes `out` holds may be reused, so
  /// that asking op after op allocates nothing.
  virtual void getStored(unsigned t, std::vector<std::optional<Box>> &out) = 0;
  /// Op `i`'s share on every worker; valid until the next call.
  virtual const std::vector<OpShare> &getShares(unsigned i) = 0;
  /// Op `i`'s class, or -1 for none: ops of one class have equal shares on
  /// every worker, the same tensor class at each input position and at
  /// the output, and the same partial flag (what
  /// planner::computeOpClasses gives).
  virtual int getOpClass(unsigned i) { return -1; }
  /// Tensor `t`'s class, or -1 for none: tensors of one class have the
  /// same shape, element size and stored box on every worker.
  virtual int getTensorClass(unsigned t) { return -1; }
};

/// predictPeaks over a plan whose `stored` boxes and op `workers` lists
/// may be empty (`plan` gives the tensors' flags and the ops' inputs,
/// outputs and partial flags; `workers` the worker count): the boxes come
/// from `boxes` one op at a time and the messages from getOpMessages, so
/// memory grows with the workers times the op and tensor classes, not
/// with a schedule.
/// Checks the boxes as validatePlan does (throws RuntimeError).
/// A partial op's reduce staging is noted per group of workers computing
/// one box, and the fetch staging of destinations whose box of an input
/// covers at least `minRowCells` cells of its grid (an all-gather's) per
/// group of destinations reading that box, so that neither lists K x K
/// messages (runtime/lib/PhaseStaging.h: addGroupedReduce, FetchStaging); the peaks
/// are the same for any `minRowCells` (tests lower it to cover that path).
constexpr std::size_t kMinRowCells = 64;
std::vector<WorkerPeak> predictPeaks(const ExecutablePlan &plan,
                                     unsigned workers, PlanBoxes &boxes,
                                     const std::vector<TensorMemory> &tensors,
                                     unsigned steps = 1,
                                     std::size_t minRowCells = kMinRowCells);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_STEPMEMORY_H
