//===- ExecutablePlan.h - A plan lowered for execution ----------*- C++ -*-===//
//
// This file declares ExecutablePlan, what the executor runs: plain structs
// with every tensor's stored box per worker and every op's iteration box,
// input boxes and output box per worker, as the cost model computes them
// (docs/CostModel.md). The LLVM side (lib/Lowering) builds it from a plan
// and its graph; the runtime needs nothing else of either.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_EXECUTABLEPLAN_H
#define TOFU_RUNTIME_EXECUTABLEPLAN_H

#include "tofu/Runtime/Box.h"

#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// One tensor of the graph.
struct TensorInfo {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<std::int64_t> shape;
  /// No op produces it: its values are given before the step.
  bool graphInput = false;
  /// It lives through the whole step (params, state, outputs, updates,
  /// tensors no op reads); others are freed after their last reader.
  bool persistent = false;
  /// The parameter or state tensor this one is the next value of, or -1.
  int updates = -1;
  /// Per worker: the box it stores, or none.
  std::vector<std::optional<Box>> stored;

  std::int64_t getNumElements() const { return Box::whole(shape).getVolume(); }
};

/// What one worker computes of an op.
struct OpShare {
  /// A range per index variable, in KernelCall order.
  Box iteration;
  /// The box of each input (by position) it reads, clipped to the tensor.
  std::vector<Box> inputs;
  /// The output box it computes.
  Box output;
};

/// One op of the graph.
struct OpInfo {
  std::string name;
  std::string type;
  std::vector<unsigned> inputs;
  unsigned output = 0;
  /// The kernel's index in the KernelProvider (the op's index by default).
  unsigned kernel = 0;
  /// The workers' outputs are partial values combined with `reducer`.
  bool partial = false;
  Reducer reducer = Reducer::Sum;
  /// Per input position: the operator reads that input only at the output
  /// element's own index, its shape the output's (analysis::
  /// getPointwiseInputs, from the operator's TDL body). Empty, or false at
  /// a position: not known to (the in-place rule then computes a next value
  /// aside: InPlaceUpdates.h).
  std::vector<bool> pointwise;
  std::vector<OpShare> workers;
};

/// Whether op `op` reads input position `slot` only at the output
/// element's own index (OpInfo::pointwise).
inline bool readsPointwise(const OpInfo &op, unsigned slot) {
  return slot < op.pointwise.size() && op.pointwise[slot];
}

/// A plan lowered for K workers.
struct ExecutablePlan {
  unsigned workers = 1;
  std::vector<TensorInfo> tensors;
  std::vector<OpInfo> ops;
  /// The plan's numbers (docs/CostModel.md), for reports.
  std::int64_t commBytes = 0;
  std::vector<std::int64_t> peakBytesPerWorker;
  /// Next values are written over the parameters and state they replace
  /// where the in-place rule allows (InPlaceUpdates.h); false: every next
  /// value gets its own buffer and, after the last op, a new one for the
  /// next step (tofu-run --in-place-updates=false).
  bool inPlaceUpdates = true;
  /// A next value written in place is computed straight into the buffer of
  /// what it replaces where its producer reads that only element for
  /// element (InPlaceUpdates.h); false: always computed aside and copied
  /// (tofu-run --direct-updates=false).
  bool directUpdates = true;
  /// Each worker's pool frees kept memory so that what it holds never
  /// exceeds its most live bytes (FreeList::setTrimming; tofu-run
  /// --trim-pools).
  bool trimPools = false;
};

/// Whether worker `w` stores a non-empty box of tensor `t`.
inline bool storesBox(const ExecutablePlan &plan, unsigned t, unsigned w) {
  const std::optional<Box> &box = plan.tensors[t].stored[w];
  return box && !box->isEmpty();
}

/// Whether worker `w` reads input `slot` of op `i` where it stores it, as
/// is: it stores exactly the box it reads. Otherwise the executor copies
/// the input box together (its local part, then the fetched pieces).
inline bool readsInPlace(const ExecutablePlan &plan, unsigned i,
                         unsigned slot, unsigned w) {
  const OpInfo &op = plan.ops[i];
  unsigned t = op.inputs[slot];
  return storesBox(plan, t, w) &&
         *plan.tensors[t].stored[w] == op.workers[w].inputs[slot];
}

/// Whether worker `w` computes op `i`'s output straight into the box it
/// stores. Otherwise the output goes to a temporary buffer and its pieces
/// are delivered (or reduced) from there.
inline bool writesInPlace(const ExecutablePlan &plan, unsigned i, unsigned w) {
  const OpInfo &op = plan.ops[i];
  return !op.partial && storesBox(plan, op.output, w) &&
         *plan.tensors[op.output].stored[w] == op.workers[w].output;
}

/// Checks the plan's internal consistency (worker counts, ranks, boxes
/// within tensors, every tensor covered by its stored boxes, every output
/// covered by the computed boxes); throws RuntimeError naming the problem.
///
/// This is the project's one plan checker. Its box rules below are public
/// so that the LLVM side applies them to a plan before lowering it
/// (planner::resolvePlanSteps, planner::verifyPlan): the planner calls the
/// runtime, never the reverse, and the runtime stays standard C++ only.
void validatePlan(const ExecutablePlan &plan);

/// Throws RuntimeError, naming `what`, unless `box` has the rank of a
/// tensor of `shape` and, when not empty, lies within it.
void checkBoxInTensor(const std::string &what, const Box &box,
                      const std::vector<std::int64_t> &shape);

/// Throws RuntimeError, naming `what` and the first cell left out, unless
/// the union of the non-null `boxes` covers the tensor of `shape`.
void checkBoxesCover(const std::string &what,
                     const std::vector<const Box *> &boxes,
                     const std::vector<std::int64_t> &shape);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_EXECUTABLEPLAN_H
