//===- CostModel.cpp - What a plan moves and holds ------------------------===//
//
// This file implements the three comm_bytes terms of docs/CostModel.md and
// the evaluation of a whole plan, with the resident bytes per worker and
// the peak bytes the runtime's pools will measure (runtime::predictPeaks on
// the plan as the runtime executes it).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/CostModel.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Plan/WorkerParts.h"
#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/Executable.h"
#include "tofu/Planner/OpClasses.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/ExecutablePlan.h"

#include <algorithm>
#include <map>

using namespace tofu;
using namespace tofu::planner;
using analysis::Range;
using analysis::Region;

int64_t planner::countFetched(ArrayRef<Range> read, HeldRegion held) {
  int64_t need = plan::getVolume(read);
  if (!need || !held)
    return need;
  return need - plan::getIntersectionVolume(read, *held);
}

static Region intersect(ArrayRef<Range> a, ArrayRef<Range> b) {
  Region r(a.size());
  for (unsigned d = 0, e = a.size(); d != e; ++d)
    r[d] = Range{std::max(a[d].lo, b[d].lo), std::min(a[d].hi, b[d].hi)};
  return r;
}

int64_t planner::countProduced(ArrayRef<Region> computed,
                               ArrayRef<HeldRegion> held, bool partial,
                               unsigned rank) {
  int64_t heldTotal = 0, heldAndComputed = 0;
  for (unsigned w = 0, e = computed.size(); w != e; ++w) {
    if (!held[w])
      continue;
    heldTotal += plan::getVolume(*held[w]);
    heldAndComputed += plan::getIntersectionVolume(*held[w], computed[w]);
  }
  if (!partial)
    return heldTotal - heldAndComputed;
  // Per element e: (|S(e)| - 1) + |D(e)| - [D(e) and S(e) meet].
  int64_t computedTotal = 0;
  SmallVector<Region, 8> meets;
  for (unsigned w = 0, e = computed.size(); w != e; ++w) {
    computedTotal += plan::getVolume(computed[w]);
    if (held[w])
      meets.push_back(intersect(*held[w], computed[w]));
  }
  return computedTotal - plan::getUnionVolume(computed, rank) + heldTotal -
         plan::getUnionVolume(meets, rank);
}

int64_t planner::countNextStep(ArrayRef<HeldRegion> param,
                               ArrayRef<HeldRegion> updated) {
  int64_t total = 0;
  for (unsigned w = 0, e = param.size(); w != e; ++w) {
    if (!param[w])
      continue;
    total += plan::getVolume(*param[w]);
    if (updated[w])
      total -= plan::getIntersectionVolume(*param[w], *updated[w]);
  }
  return total;
}

static llvm::Error planError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

runtime::Box planner::toRuntimeBox(ArrayRef<Range> region) {
  runtime::Box box;
  assignRuntimeBox(region, box);
  return box;
}

void planner::assignRuntimeBox(ArrayRef<Range> region, runtime::Box &box) {
  box.lo.resize(region.size());
  box.hi.resize(region.size());
  for (unsigned d = 0, e = region.size(); d != e; ++d) {
    box.lo[d] = region[d].lo;
    box.hi[d] = std::max(region[d].lo, region[d].hi);
  }
}

/// What runtime::checkBoxInTensor accepts: the tensor's rank, and empty or
/// within the tensor.
static bool liesInTensor(ArrayRef<Range> region, ArrayRef<int64_t> shape) {
  if (region.size() != shape.size())
    return false;
  bool empty = false, inside = true;
  for (unsigned d = 0, e = region.size(); d != e; ++d) {
    empty |= region[d].hi <= region[d].lo;
    inside &= region[d].lo >= 0 && region[d].hi <= shape[d];
  }
  return empty || inside;
}

llvm::Error planner::applyRuntimeRule(llvm::function_ref<void()> rule) {
  try {
    rule();
  } catch (const runtime::RuntimeError &e) {
    return planError(e.what());
  }
  return llvm::Error::success();
}

bool planner::isPartialShare(const ProblemOp &op, ArrayRef<uint8_t> steps) {
  for (uint8_t s : steps)
    if (op.isReduceStep(s))
      return true;
  return false;
}

void planner::computeOpShare(const ProblemOp &op, ArrayRef<unsigned> levels,
                             ArrayRef<uint8_t> steps, ArrayRef<unsigned> digits,
                             SmallVectorImpl<Range> &box,
                             analysis::WorkerRegions &regions) {
  getOpBox(op, levels, steps, digits, box);
  analysis::computeWorkerRegions(op.binding, box, regions);
}

void planner::forEachOpShare(
    const ProblemOp &op, ArrayRef<unsigned> levels, ArrayRef<uint8_t> steps,
    llvm::function_ref<void(unsigned, ArrayRef<Range>,
                            const analysis::WorkerRegions &, bool)>
        fn) {
  assert(steps.size() <= levels.size() && "a step beyond the levels");
  SmallVector<Range, 8> whole;
  analysis::getFullBox(op.binding, whole);
  SmallVector<Range, 8> previous;
  analysis::WorkerRegions regions;
  // The replicate step (ProblemOp::getReplicateStep) splits no variable.
  plan::forEachWorkerPart(
      whole, levels,
      [&](unsigned l) {
        return l < steps.size() && steps[l] < op.strategies.size()
                   ? op.strategies[steps[l]].var
                   : ~0u;
      },
      [&](unsigned w, const SmallVector<Range, 8> &box) {
        bool same = w && box == previous;
        if (!same) {
          analysis::computeWorkerRegions(op.binding, box, regions);
          previous = box;
        }
        fn(w, box, regions, same);
      });
}

llvm::Error planner::checkPlanMatchesGraph(const graph::Graph &g,
                                           const plan::Plan &p) {
  if (plan::getNumWorkers(p.levels) != p.workers)
    return planError("levels multiply to " +
                     Twine(plan::getNumWorkers(p.levels)) + ", not " +
                     Twine(p.workers) + " workers");
  for (unsigned f : p.levels)
    if (f < 2)
      return planError("a level factor is " + Twine(f) + " (each must be >= 2)");
  if (p.ops.size() != g.getNumOps())
    return planError("the plan has " + Twine(p.ops.size()) +
                     " ops, the graph " + Twine(g.getNumOps()));
  if (p.tensors.size() != g.getNumTensors())
    return planError("the plan has " + Twine(p.tensors.size()) +
                     " tensors, the graph " + Twine(g.getNumTensors()));
  for (unsigned i = 0, e = p.ops.size(); i != e; ++i) {
    const plan::OpPlan &op = p.ops[i];
    if (op.name != g.getOp(i).name)
      return planError("op " + Twine(i) + " is '" + op.name +
                       "' in the plan but '" + g.getOp(i).name +
                       "' in the graph");
    if (op.steps.size() != p.levels.size())
      return planError("op '" + op.name + "' has " + Twine(op.steps.size()) +
                       " steps for " + Twine(p.levels.size()) + " levels");
  }
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    const plan::TensorPlan &tensor = p.tensors[t];
    if (tensor.name != g.getTensor(t).name)
      return planError("tensor " + Twine(t) + " is '" + tensor.name +
                       "' in the plan but '" + g.getTensor(t).name +
                       "' in the graph");
    if (tensor.layout && tensor.layout->size() != p.levels.size())
      return planError("tensor '" + tensor.name + "': its layout has " +
                       Twine(tensor.layout->size()) + " steps for " +
                       Twine(p.levels.size()) + " levels");
    if ((!tensor.layout || !tensor.regions.empty()) &&
        tensor.regions.size() != p.workers)
      return planError("tensor '" + tensor.name + "' has " +
                       Twine(tensor.regions.size()) + " regions for " +
                       Twine(p.workers) + " workers");
  }
  return llvm::Error::success();
}

llvm::Error
planner::resolvePlanSteps(const PlanningProblem &problem, const plan::Plan &p,
                          std::vector<SmallVector<uint8_t, 4>> &steps) {
  const graph::Graph &g = problem.getGraph();
  if (llvm::Error err = checkPlanMatchesGraph(g, p))
    return err;
  steps.resize(p.ops.size());
  for (unsigned i = 0, e = p.ops.size(); i != e; ++i) {
    auto resolved = resolveSteps(problem.getOp(i), p.ops[i].steps);
    if (!resolved)
      return planError("op '" + p.ops[i].name +
                       "': " + llvm::toString(resolved.takeError()));
    steps[i] = std::move(*resolved);
  }
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    const plan::TensorPlan &tensor = p.tensors[t];
    const graph::Tensor &gt = g.getTensor(t);
    // The match check allows a layout without regions; its regions are
    // derived from the shape the layout records, which must be the graph's
    // (a layout of dimensions within the rank always lies in the tensor).
    if (tensor.regions.empty()) {
      if (!llvm::equal(tensor.shape, gt.shape))
        return planError("tensor '" + tensor.name +
                         "' has only a layout, without the graph's shape: "
                         "check its layouts first (plan::checkLayouts)");
      continue;
    }
    std::vector<int64_t> shape(gt.shape.begin(), gt.shape.end());
    for (unsigned w = 0; w != p.workers; ++w) {
      const auto &region = tensor.regions[w];
      // The runtime's rule words the error; a region that keeps it (the
      // common case) is not converted and named first.
      if (!region || liesInTensor(*region, shape))
        continue;
      if (llvm::Error err = applyRuntimeRule([&] {
            runtime::checkBoxInTensor("tensor '" + tensor.name +
                                          "' stored on worker " +
                                          std::to_string(w),
                                      toRuntimeBox(*region), shape);
          }))
        return err;
    }
  }
  return llvm::Error::success();
}

namespace {

/// Evaluates one plan: per op the regions of every worker and the fetch and
/// produce terms. Stored regions are taken through
/// plan::forEachStoredRegion (getStoredRegion for every worker at once),
/// one op's tensors at a time. Ops of one class (OpClasses.h) have the
/// same terms and buffers, tensors of one class the same stored bytes:
/// each is computed once per class, so the work grows with K times the
/// classes, not K times the graph.
class PlanEvaluator {
public:
  PlanEvaluator(const PlanningProblem &problem, const plan::Plan &p,
                ArrayRef<SmallVector<uint8_t, 4>> steps)
      : problem(problem), p(p), steps(steps) {}

  CostReport run();

private:
  /// Every worker's stored region of tensor `t`: `held[w]` points into
  /// `buffers[w]`, or is null where worker w stores nothing.
  void heldByAll(unsigned t, SmallVectorImpl<Region> &buffers,
                 SmallVectorImpl<HeldRegion> &held) const {
    buffers.resize(p.workers);
    held.resize(p.workers);
    plan::forEachStoredRegion(p.tensors[t], p.levels,
                              [&](unsigned w, const Region *region) {
                                if (!region) {
                                  held[w] = nullptr;
                                  return;
                                }
                                buffers[w] = *region;
                                held[w] = &buffers[w];
                              });
  }
  void evaluateOp(unsigned i);

  const PlanningProblem &problem;
  const plan::Plan &p;
  ArrayRef<SmallVector<uint8_t, 4>> steps;
  CostReport report;
  std::vector<SmallVector<Region, 8>> inputRegions;
  std::vector<SmallVector<HeldRegion, 8>> inputHeld;
};

} // namespace

void PlanEvaluator::evaluateOp(unsigned i) {
  const ProblemOp &op = problem.getOp(i);
  SmallVector<Region, 8> computed(p.workers), outRegions(p.workers);
  SmallVector<HeldRegion, 8> outHeld(p.workers);
  // Each input's stored regions, kept from op to op.
  if (inputRegions.size() < op.inputs.size()) {
    inputRegions.resize(op.inputs.size());
    inputHeld.resize(op.inputs.size());
  }
  for (unsigned pos = 0, e = op.inputs.size(); pos != e; ++pos)
    heldByAll(op.inputs[pos], inputRegions[pos], inputHeld[pos]);
  heldByAll(op.output, outRegions, outHeld);
  plan::OpCost &cost = report.ops[i];
  bool partial = isPartialShare(op, steps[i]);
  const ProblemTensor &out = problem.getTensor(op.output);
  forEachOpShare(op, p.levels, steps[i], [&](unsigned w, ArrayRef<Range>,
                                              const analysis::WorkerRegions
                                                  &regions,
                                              bool) {
    int64_t fetchBytes = 0, workspace = 0;
    for (unsigned pos = 0, e = op.inputs.size(); pos != e; ++pos) {
      unsigned t = op.inputs[pos];
      const Region &read = regions.inputs[pos];
      HeldRegion h = inputHeld[pos][w];
      int64_t size = problem.getTensor(t).elementSize;
      fetchBytes += countFetched(read, h) * size;
      // The runtime reads an input it does not hold exactly as one
      // buffer of the whole read region, its own part copied in.
      int64_t volume = plan::getVolume(read);
      if (volume && !(h && *h == read))
        workspace += volume * size;
    }
    cost.fetchBytes += fetchBytes;
    computed[w] = regions.output;
    // The op's buffers at once: its re-laid-out inputs, the messages it
    // receives, and its output where it is not computed into its stored
    // buffer (partial, or stored otherwise).
    int64_t buffers = workspace + fetchBytes +
                      plan::getVolume(regions.output) * out.elementSize;
    report.largestBuffersPerWorker[w] =
        std::max(report.largestBuffersPerWorker[w], buffers);
  });
  cost.produceBytes =
      countProduced(computed, outHeld, partial, out.rank) * out.elementSize;
}

CostReport PlanEvaluator::run() {
  const graph::Graph &g = problem.getGraph();
  unsigned k = p.workers;
  report.ops.resize(g.getNumOps());
  report.nextStepBytes.assign(g.getNumTensors(), 0);
  report.residentBytesPerWorker.assign(k, 0);
  report.largestBuffersPerWorker.assign(k, 0);
  OpClasses classes = computeOpClasses(problem, p, steps);
  // Each tensor class's stored bytes, once per worker, times its tensors.
  std::vector<int> firstTensor(classes.numTensorClasses, -1);
  std::vector<int64_t> tensorsInClass(classes.numTensorClasses, 0);
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    unsigned c = classes.tensorClass[t];
    if (firstTensor[c] < 0)
      firstTensor[c] = int(t);
    ++tensorsInClass[c];
  }
  for (unsigned c = 0; c != classes.numTensorClasses; ++c) {
    unsigned t = unsigned(firstTensor[c]);
    int64_t size = problem.getTensor(t).elementSize * tensorsInClass[c];
    plan::forEachStoredRegion(
        p.tensors[t], p.levels, [&](unsigned w, const Region *region) {
          if (region)
            report.residentBytesPerWorker[w] += plan::getVolume(*region) * size;
        });
  }
  std::vector<int> firstOp(classes.numOpClasses, -1);
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    int &first = firstOp[classes.opClass[i]];
    if (first < 0) {
      first = int(i);
      evaluateOp(i);
    } else {
      report.ops[i] = report.ops[first];
    }
    report.commBytes += report.ops[i].total();
  }
  // A next value's bytes follow its and its parameter's classes.
  std::map<std::pair<unsigned, unsigned>, int64_t> nextStepByClasses;
  SmallVector<HeldRegion, 8> param(k), updated(k);
  SmallVector<Region, 8> paramRegions(k), updatedRegions(k);
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    int target = problem.getTensor(t).updates;
    if (target < 0)
      continue;
    auto [known, inserted] = nextStepByClasses.try_emplace(
        {classes.tensorClass[target], classes.tensorClass[t]}, 0);
    if (inserted) {
      heldByAll(target, paramRegions, param);
      heldByAll(t, updatedRegions, updated);
      known->second = countNextStep(param, updated) *
                      problem.getTensor(target).elementSize;
    }
    report.nextStepBytes[t] = known->second;
    report.commBytes += report.nextStepBytes[t];
  }
  return report;
}

llvm::Expected<CostReport> planner::evaluatePlan(const PlanningProblem &problem,
                                                 const plan::Plan &p,
                                                 Peaks peaks) {
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = resolvePlanSteps(problem, p, steps))
    return std::move(err);
  CostReport report = PlanEvaluator(problem, p, steps).run();
  if (peaks == Peaks::Predict)
    predictPeaks(problem, p, steps, report);
  return report;
}

void planner::recordPeaks(const PlanningProblem &problem, plan::Plan &p,
                          std::vector<runtime::WorkerPeak> *peaks) {
  std::vector<SmallVector<uint8_t, 4>> steps;
  CostReport report;
  if (llvm::Error err = resolvePlanSteps(problem, p, steps)) {
    // A plan that does not resolve has no schedule: no peaks (-1).
    llvm::consumeError(std::move(err));
    p.peakBytesPerWorker.assign(p.workers, -1);
    return;
  }
  predictPeaks(problem, p, steps, report);
  p.peakBytesPerWorker = report.peakBytesPerWorker;
  if (peaks)
    *peaks = std::move(report.peaks);
}

void planner::predictPeaks(const PlanningProblem &problem, const plan::Plan &p,
                           ArrayRef<SmallVector<uint8_t, 4>> steps,
                           CostReport &report) {
  report.peakBytesPerWorker.assign(p.workers, -1);
  report.peaks.assign(p.workers, runtime::WorkerPeak());
  // Only a plan whose stored regions cover every tensor has a schedule.
  auto peaks = predictPlanPeaks(problem, p, steps);
  if (!peaks) {
    llvm::consumeError(peaks.takeError());
    return;
  }
  report.peaks = std::move(*peaks);
  for (unsigned w = 0; w != p.workers; ++w)
    report.peakBytesPerWorker[w] = report.peaks[w].bytes;
}

void planner::recordCosts(const CostReport &report, plan::Plan &p) {
  p.commBytes = report.commBytes;
  p.residentBytesPerWorker = report.residentBytesPerWorker;
  p.peakBytesPerWorker = report.peakBytesPerWorker;
  for (unsigned i = 0, e = std::min(p.ops.size(), report.ops.size()); i != e; ++i)
    p.ops[i].cost = report.ops[i];
}
