//===- Assignment.h - Per-level decisions and the regions they make -*- C++ -*-===//
//
// This file declares Assignment, the searches' compact form of a plan: for
// every op one step index per level (ProblemOp::getStep), for every tensor
// one dimension per level (the tensor's rank meaning replicate). From it
// follow each worker's iteration box of an op and stored region of a
// tensor, exactly as docs/CostModel.md nests the levels, and the plan IR.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_ASSIGNMENT_H
#define TOFU_PLANNER_ASSIGNMENT_H

#include "tofu/Planner/PlanningProblem.h"

#include "llvm/Support/Error.h"

namespace tofu {
namespace planner {

/// Decisions at each level (outermost first) for every op and tensor.
struct Assignment {
  SmallVector<unsigned, 4> levels;
  /// [op][level]: a step index of the op.
  std::vector<SmallVector<uint8_t, 4>> opSteps;
  /// [tensor][level]: the dimension split, or the rank for replicate.
  std::vector<SmallVector<uint8_t, 4>> tensorDims;
};

/// Worker `digits`'s iteration box for an op taking `steps` at the levels
/// `levels` (as many as `steps`): every variable's full range, each level
/// keeping its part of the variable it splits or reduces.
void getOpBox(const ProblemOp &op, ArrayRef<unsigned> levels,
              ArrayRef<uint8_t> steps, ArrayRef<unsigned> digits,
              SmallVectorImpl<analysis::Range> &box);

/// Worker `digits`'s stored region of a tensor of `shape` laid out by
/// `dims` (one per level; `shape.size()` replicates).
void getTensorRegion(ArrayRef<int64_t> shape, ArrayRef<unsigned> levels,
                     ArrayRef<uint8_t> dims, ArrayRef<unsigned> digits,
                     analysis::Region &region);

/// True if `steps` mixes replicate and reduce (a plan may not: replicas of
/// partial values would be summed twice).
bool mixesReplicateAndReduce(const ProblemOp &op, ArrayRef<uint8_t> steps);

/// The step indices of plan steps for `op`; an error naming what is wrong
/// (unknown variable, a split of a reduction variable, ...).
llvm::Expected<SmallVector<uint8_t, 4>> resolveSteps(const ProblemOp &op,
                                                     ArrayRef<plan::Step> steps);

/// The plan IR of an assignment (steps and regions; no costs).
plan::Plan materializePlan(const PlanningProblem &problem,
                           const Assignment &assignment);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_ASSIGNMENT_H
