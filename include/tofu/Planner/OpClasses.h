//===- OpClasses.h - Ops and tensors a plan treats alike --------*- C++ -*-===//
//
// This file declares the classes of a plan's tensors and ops: two tensors
// of one class have the same shape, element size and stored region on
// every worker; two ops of one class have every worker's share (iteration,
// input and output boxes) equal, the same tensor class at each input
// position and at the output, and the same partial flag. A model of
// repeated layers (GPT-3's 96) has a few hundred op classes however many
// ops it has, so whatever is a function of an op's boxes and its tensors'
// regions alone (its comm bytes, its messages and staging) is computed
// once per class.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_OPCLASSES_H
#define TOFU_PLANNER_OPCLASSES_H

#include "tofu/Planner/PlanningProblem.h"

namespace tofu {
namespace planner {

struct OpClasses {
  /// Per tensor (graph order), its class, numbered from 0 in order of
  /// first appearance.
  std::vector<unsigned> tensorClass;
  /// Per op (graph order), its class, numbered likewise.
  std::vector<unsigned> opClass;
  unsigned numTensorClasses = 0;
  unsigned numOpClasses = 0;
};

/// The classes of `p`'s tensors and ops; `steps` are its ops' steps as
/// resolvePlanSteps gives them. A tensor whose regions its compact layout
/// alone gives is keyed by its shape, element size and layout; a tensor
/// with listed regions is a class of its own. An op is keyed by its
/// operator analysis, its binding's shapes and params, its steps and its
/// inputs' and output's tensor classes.
OpClasses computeOpClasses(const PlanningProblem &problem, const plan::Plan &p,
                           ArrayRef<SmallVector<uint8_t, 4>> steps);

/// computeOpClasses' tensor classes alone (`opClass` left empty), for what
/// needs no op steps (the plan verifier's coverage check).
OpClasses computeTensorClasses(const PlanningProblem &problem,
                               const plan::Plan &p);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_OPCLASSES_H
