//===- Layouts.h - Compact tensor layouts in plans --------------*- C++ -*-===//
//
// This file declares the compact form of a plan's tensors
// (docs/PlanFormat.md, "Compact layouts"): one step per level, `split:D` or
// `replicate`, instead of one region per worker. Its regions are derived by
// analysis::getLayoutRegion, the derivation the planner uses, where they
// are read: getStoredRegion is every reader's one accessor
// (forEachStoredRegion the same for all workers at once).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLAN_LAYOUTS_H
#define TOFU_PLAN_LAYOUTS_H

#include "tofu/Plan/Plan.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace tofu {
namespace plan {

/// Up to this many workers a written plan lists every tensor's per-worker
/// regions (outside checks read them); above it, a tensor with a layout is
/// written as its layout alone.
constexpr unsigned kMaxListedWorkers = 64;

/// "split:D" or "replicate".
std::string formatLayoutStep(uint8_t dim);
/// Parses formatLayoutStep's spelling; None if malformed (or D >= 255).
llvm::Optional<uint8_t> parseLayoutStep(StringRef text);

/// Worker `w`'s region of a tensor of `shape` laid out by `layout` under
/// `levels` (analysis::getLayoutRegion; possibly empty, never None).
Region getLayoutRegion(ArrayRef<int64_t> shape, ArrayRef<unsigned> levels,
                       ArrayRef<uint8_t> layout, unsigned w);

/// Worker `digits`'s stored region of `tensor` in a plan of `levels`, into
/// `region`: its listed region when the plan lists them, else the region
/// its layout derives from its shape. The one accessor every reader of a
/// plan's regions uses (cost model, verifier, lowering, summaries,
/// writer). False when the worker stores nothing (a listed null; `region`
/// is then left as it was); a derived region may be empty.
bool getStoredRegion(const TensorPlan &tensor, ArrayRef<unsigned> levels,
                     ArrayRef<unsigned> digits, Region &region);
/// The same for worker number `w` of `p`.
bool getStoredRegion(const Plan &p, const TensorPlan &tensor, unsigned w,
                     Region &region);
/// getStoredRegion for every worker of a plan of `levels`, in worker
/// order: `fn(w, region)`, `region` null where worker `w` stores nothing
/// (valid during the call only). A layout's regions are derived by
/// forEachWorkerPart (WorkerParts.h), level by level as the workers'
/// digits change, not from scratch per worker: the same regions, by the
/// same nested even parts, in about two parts per worker instead of one
/// per level.
void forEachStoredRegion(const TensorPlan &tensor, ArrayRef<unsigned> levels,
                         llvm::function_ref<void(unsigned, const Region *)> fn);
/// Elements worker `digits` stores of `tensor` (0 for nothing).
int64_t getStoredVolume(const TensorPlan &tensor, ArrayRef<unsigned> levels,
                        ArrayRef<unsigned> digits);
/// Whether `tensor` gives a region for each of `workers` workers: a list of
/// that many, or a layout.
bool hasStoredRegions(const TensorPlan &tensor, unsigned workers);

/// Checks every layout of `p` against the graph's shapes (`shapeOf(t)` for
/// tensor `t`, `numTensors` of them, graph order): no dimension beyond the
/// rank; a tensor with both a layout and a regions list must have the
/// regions its layout derives. `p` must match the graph
/// (planner::checkPlanMatchesGraph, which tools run first). Records each
/// layout's shape (TensorPlan::shape), so that getStoredRegion derives its
/// regions; no per-worker list is made.
llvm::Error checkLayouts(Plan &p, unsigned numTensors,
                         llvm::function_ref<ArrayRef<int64_t>(unsigned)> shapeOf);

} // namespace plan
} // namespace tofu

#endif // TOFU_PLAN_LAYOUTS_H
