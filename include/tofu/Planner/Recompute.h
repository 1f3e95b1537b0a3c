//===- Recompute.h - Forward activations recomputed in the backward pass -*- C++ -*-===//
//
// This file declares activation recomputation as a graph rewrite. A plan
// may list forward activations in `recompute` (docs/PlanFormat.md); the
// step it describes is the graph rewritten so that each listed tensor `t`
// is freed after its last forward reader and computed again, by a clone of
// its producer, just before its first backward reader:
//  - the clone is an op `<producer>@recompute` of the producer's type and
//    params writing a new tensor `<t>@recompute` (same shape, dtype and
//    role); it reads what the producer reads, except that an input that is
//    itself recomputed is read as its copy;
//  - every backward op reading `t` reads `<t>@recompute` instead;
//  - clones are inserted in graph order, each right before the first op
//    that reads its copy (a clone needing another clone's copy comes after
//    that clone); copies are appended after the graph's tensors, so every
//    original tensor keeps its index.
// The plan of the rewritten graph (expandRecomputePlan) gives each clone
// its producer's steps and each copy its original's regions, so the clone
// moves what the producer moved and its copy is stored where the original
// was. The cost model, the peak prediction and the runtime then judge and
// execute the rewritten graph and its plan like any other
// (docs/CostModel.md, "Recomputation"); a plan recomputing nothing is
// today's plan of the graph itself.
//
// The backward pass starts at the first op writing a gradient (a tensor of
// role grad: the loss's seed); ops before it are the forward pass. A
// tensor may be recomputed when a forward op with at least one input
// (random ops have none) writes it, its role is activation, and a backward
// op reads it (a candidate).
//
// Chains: recomputing a candidate alone keeps its producer's inputs live
// until the clone reads them in the backward pass, even inputs no backward
// op reads (attention scores before the softmax, the MLP's pre-activation,
// reshapes). A plan may therefore also list such an input, a chain member:
// an activation written by a forward op with inputs, read by no backward
// op, and read by the producer of another listed tensor. It is recomputed
// like a candidate (its clone runs before the clone reading its copy) and
// freed after its last forward reader. getRecomputeChain gives a
// candidate's whole chain: the candidate and, recursively, its producer's
// inputs that are chain members, back to tensors that stay live anyway
// (read by a backward op, parameters, graph inputs).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_RECOMPUTE_H
#define TOFU_PLANNER_RECOMPUTE_H

#include "tofu/Graph/Graph.h"
#include "tofu/Plan/Plan.h"
#include "tofu/Planner/PlanningProblem.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace planner {

/// The suffix of clones' and copies' names.
constexpr const char *RecomputeSuffix = "@recompute";

/// The index of the first op of the backward pass (the first op writing a
/// tensor of role grad), or the number of ops when there is none.
unsigned getBackwardStart(const graph::Graph &g);

/// The tensors `g` lets a plan recompute, in tensor order.
std::vector<unsigned> getRecomputeCandidates(const graph::Graph &g);

/// Whether `t` may be a chain member: an activation written by a forward op
/// with inputs (before `backward`, getBackwardStart) that no backward op
/// reads.
bool isRecomputeChainMember(const graph::Graph &g, unsigned t,
                            unsigned backward);

/// Candidate `t` and the chain members its recomputation needs, in tensor
/// order: each input of a listed tensor's producer that is a chain member
/// (isRecomputeChainMember), recursively. Just `t` when its producer reads
/// none.
std::vector<unsigned> getRecomputeChain(const graph::Graph &g, unsigned t,
                                        unsigned backward);

/// The candidates that cut the forward pass: every tensor an earlier
/// forward op writes has no forward reader after the candidate's producer
/// (a ResNet block's output, a transformer's residual stream between
/// sublayers). Recomputing every candidate but some cuts recomputes the
/// forward pass segment by segment from the cuts kept, in tensor order.
std::vector<unsigned> getRecomputeCuts(const graph::Graph &g);

/// A graph rewritten to recompute some of its tensors.
struct RecomputedGraph {
  std::unique_ptr<graph::Graph> graph;
  /// Per op of `graph`: the op of the original graph it is or clones.
  std::vector<unsigned> opOrigin;
  /// Per tensor of `graph`: the tensor of the original graph it is or
  /// copies.
  std::vector<unsigned> tensorOrigin;
};

/// `g` (linked) rewritten to recompute the tensors named `names`. An error
/// names a tensor that is unknown, listed twice, neither a candidate
/// (getRecomputeCandidates) nor a chain member read by another listed
/// tensor's producer, and a clone's or copy's name already taken.
llvm::Expected<RecomputedGraph>
rewriteForRecompute(const graph::Graph &g, ArrayRef<std::string> names);

/// `p`, a plan of the original graph (its ops and tensors in graph order,
/// regions or compact layouts), as a plan of `r.graph`: each clone takes
/// its producer's steps, each copy its original's regions and layout. The
/// numbers and the `recompute` list are kept.
plan::Plan expandRecomputePlan(const plan::Plan &p, const RecomputedGraph &r);

/// A plan with `recompute` ready to judge and run: the rewritten graph,
/// bound to its operators, and the plan of it.
struct RecomputedPlan {
  RecomputedGraph rewritten;
  std::unique_ptr<PlanningProblem> problem;
  plan::Plan plan;
};

/// Rewrites `g` for `p.recompute` and binds it with `specs` (which hold
/// the operators of `g`'s ops); `p` is a plan of `g`.
llvm::Expected<RecomputedPlan> prepareRecomputedPlan(const graph::Graph &g,
                                                     graph::SpecLibrary &specs,
                                                     const plan::Plan &p);

/// The bytes some worker must hold at once under any plan of `g` on
/// `workers` workers that recomputes nothing: the most bytes of tensors
/// live at one op (written by an earlier op or a graph input, read at or
/// after it, or kept through the step as the runtime keeps parameters,
/// state, outputs and next values; a parameter or state only until the op
/// whose next value the runtime may write over it, as its in-place rule
/// allows), divided by `workers`, rounded up.
/// Every plan stores every live tensor somewhere, so its fullest worker's
/// peak is at least this.
int64_t getLiveBytesBound(const graph::Graph &g, unsigned workers);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_RECOMPUTE_H
