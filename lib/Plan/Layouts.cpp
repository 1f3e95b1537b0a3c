//===- Layouts.cpp - Compact tensor layouts in plans ----------------------===//
//
// This file implements the spelling of compact layout steps and the check
// (and expansion) of a plan's layouts against its graph's shapes.
//
//===----------------------------------------------------------------------===//

#include "tofu/Plan/Layouts.h"
#include "tofu/Plan/WorkerParts.h"

#include "tofu/Analysis/Layout.h"

#include <cassert>

using namespace tofu;
using namespace tofu::plan;

std::string plan::formatLayoutStep(uint8_t dim) {
  return dim == kReplicateDim ? "replicate" : "split:" + std::to_string(dim);
}

llvm::Optional<uint8_t> plan::parseLayoutStep(StringRef text) {
  if (text == "replicate")
    return kReplicateDim;
  unsigned dim;
  if (!text.consume_front("split:") || text.empty() || text[0] == '+' ||
      text.getAsInteger(10, dim) || dim >= kReplicateDim)
    return llvm::None;
  return uint8_t(dim);
}

Region plan::getLayoutRegion(ArrayRef<int64_t> shape, ArrayRef<unsigned> levels,
                             ArrayRef<uint8_t> layout, unsigned w) {
  Region region;
  analysis::getLayoutRegion(shape, levels, layout, w, region);
  return region;
}

bool plan::getStoredRegion(const TensorPlan &tensor, ArrayRef<unsigned> levels,
                           ArrayRef<unsigned> digits, Region &region) {
  if (tensor.regions.empty()) {
    assert(tensor.layout && "a tensor with neither regions nor a layout");
    analysis::getLayoutRegion(tensor.shape, levels, *tensor.layout, digits,
                              region);
    return true;
  }
  unsigned w = 0;
  for (unsigned l = 0, e = levels.size(); l != e; ++l)
    w = w * levels[l] + digits[l];
  const llvm::Optional<Region> &listed = tensor.regions[w];
  if (!listed)
    return false;
  region = *listed;
  return true;
}

bool plan::getStoredRegion(const Plan &p, const TensorPlan &tensor, unsigned w,
                           Region &region) {
  SmallVector<unsigned, 8> digits;
  getWorkerDigits(p.levels, w, digits);
  return getStoredRegion(tensor, p.levels, digits, region);
}

void plan::forEachStoredRegion(
    const TensorPlan &tensor, ArrayRef<unsigned> levels,
    llvm::function_ref<void(unsigned, const Region *)> fn) {
  unsigned workers = 1;
  for (unsigned n : levels)
    workers *= n;
  if (!tensor.regions.empty()) {
    for (unsigned w = 0; w != workers; ++w)
      fn(w, tensor.regions[w] ? &*tensor.regions[w] : nullptr);
    return;
  }
  assert(tensor.layout && "a tensor with neither regions nor a layout");
  ArrayRef<uint8_t> dims = *tensor.layout;
  assert(dims.size() <= levels.size() && "a layout step beyond the levels");
  Region whole(tensor.shape.size());
  for (unsigned d = 0, e = tensor.shape.size(); d != e; ++d)
    whole[d] = analysis::Range{0, tensor.shape[d]};
  // A replicate step (kReplicateDim) is no dimension: the region stays.
  forEachWorkerPart(
      whole, levels,
      [&](unsigned l) { return l < dims.size() ? unsigned(dims[l]) : ~0u; },
      [&](unsigned w, const Region &region) { fn(w, &region); });
}

int64_t plan::getStoredVolume(const TensorPlan &tensor,
                              ArrayRef<unsigned> levels,
                              ArrayRef<unsigned> digits) {
  Region region;
  return getStoredRegion(tensor, levels, digits, region) ? getVolume(region)
                                                         : 0;
}

bool plan::hasStoredRegions(const TensorPlan &tensor, unsigned workers) {
  return tensor.regions.empty() ? tensor.layout.hasValue()
                                : tensor.regions.size() == workers;
}

static llvm::Error layoutError(const TensorPlan &tensor, const Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "plan: tensor '" + tensor.name +
                                     "': " + what);
}

static std::string formatRegion(const llvm::Optional<Region> &region) {
  if (!region)
    return "null";
  std::string text = "[";
  for (unsigned d = 0, e = region->size(); d != e; ++d)
    text += (d ? ",[" : "[") + std::to_string((*region)[d].lo) + "," +
            std::to_string((*region)[d].hi) + "]";
  return text + "]";
}

llvm::Error
plan::checkLayouts(Plan &p, unsigned numTensors,
                   llvm::function_ref<ArrayRef<int64_t>(unsigned)> shapeOf) {
  // The plan matches its graph (planner::checkPlanMatchesGraph): a tensor
  // per graph tensor, a step per level in each layout, and listed regions
  // one per worker.
  assert(p.tensors.size() == numTensors && "a plan of another graph");
  SmallVector<unsigned, 8> digits;
  for (unsigned t = 0; t != numTensors; ++t) {
    TensorPlan &tensor = p.tensors[t];
    if (!tensor.layout)
      continue;
    ArrayRef<int64_t> shape = shapeOf(t);
    const auto &layout = *tensor.layout;
    for (unsigned l = 0, n = layout.size(); l != n; ++l)
      if (layout[l] != kReplicateDim && layout[l] >= shape.size())
        return layoutError(tensor, "layout step " + Twine(l) + " '" +
                                       formatLayoutStep(layout[l]) +
                                       "' names a dimension beyond its rank " +
                                       Twine(shape.size()));
    tensor.shape.assign(shape.begin(), shape.end());
    if (tensor.regions.empty())
      continue;
    Region derived;
    for (unsigned w = 0; w != p.workers; ++w) {
      getWorkerDigits(p.levels, w, digits);
      analysis::getLayoutRegion(shape, p.levels, layout, digits, derived);
      const llvm::Optional<Region> &listed = tensor.regions[w];
      int64_t volume = listed ? getVolume(*listed) : 0;
      bool same = volume == 0 ? getVolume(derived) == 0 : *listed == derived;
      if (!same)
        return layoutError(tensor, "worker " + Twine(w) + "'s region " +
                                       formatRegion(listed) +
                                       " is not its layout's " +
                                       formatRegion(derived));
    }
  }
  return llvm::Error::success();
}
