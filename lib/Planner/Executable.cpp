//===- Executable.cpp - A plan as the runtime executes it -----------------===//
//
// This file implements buildExecutablePlan: per worker each op's share
// (computeOpShare) and each tensor's stored region, and which tensors live
// through the step; its skeleton without boxes and the runtime's op rules
// (getOpRule), from which a compiled plan derives the same boxes; predictPlanPeaks, the runtime's peak prediction on the
// same boxes derived one op at a time; and getTensorMemory, the element
// sizes and uses that prediction takes.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Executable.h"
#include "tofu/Analysis/PointwiseInputs.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/OpClasses.h"

using namespace tofu;
using namespace tofu::planner;
using runtime::Box;

llvm::Expected<runtime::ElementType> planner::getRuntimeElementType(DType dtype) {
  using runtime::ElementType;
  switch (dtype) {
  case DType::F32: return ElementType::F32;
  case DType::F64: return ElementType::F64;
  case DType::I64: return ElementType::I64;
  case DType::I32: return ElementType::I32;
  case DType::I8: return ElementType::I8;
  case DType::Bool: return ElementType::Bool;
  case DType::F16: return ElementType::F16;
  case DType::BF16: return ElementType::BF16;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "dtype " + getDTypeName(dtype).str() +
                                     " is not executed by the runtime");
}

static runtime::Reducer toReducer(tdl::Reducer reducer) {
  switch (reducer) {
  case tdl::Reducer::Sum: return runtime::Reducer::Sum;
  case tdl::Reducer::Prod: return runtime::Reducer::Prod;
  case tdl::Reducer::Max: return runtime::Reducer::Max;
  case tdl::Reducer::Min: return runtime::Reducer::Min;
  }
  return runtime::Reducer::Sum;
}

/// The tensors of `p`; with `withBoxes` false their stored boxes are left
/// out (runtime::PlanBoxes gives them).
static llvm::Error buildTensors(const PlanningProblem &problem,
                                const plan::Plan &p,
                                UnexecutedTypes unexecuted, bool withBoxes,
                                runtime::ExecutablePlan &out) {
  const graph::Graph &g = problem.getGraph();
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const graph::Tensor &gt = g.getTensor(t);
    const ProblemTensor &pt = problem.getTensor(t);
    runtime::TensorInfo info;
    info.name = gt.name;
    auto type = getRuntimeElementType(gt.dtype);
    if (type)
      info.type = *type;
    else if (unexecuted == UnexecutedTypes::Placeholder)
      llvm::consumeError(type.takeError());
    else
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tensor '" + gt.name + "': " +
                                         llvm::toString(type.takeError()));
    info.shape.assign(gt.shape.begin(), gt.shape.end());
    info.graphInput = pt.producer < 0;
    // Parameters and state, outputs, next values and tensors no op reads
    // live through the step; the others are freed after their last reader.
    info.persistent = info.graphInput
                          ? gt.role != graph::Role::Input
                          : gt.role == graph::Role::Output || pt.updates >= 0 ||
                                g.getUsers(t).empty();
    info.updates = pt.updates;
    if (withBoxes) {
      analysis::Region region;
      for (unsigned w = 0; w != p.workers; ++w)
        info.stored.push_back(
            plan::getStoredRegion(p, p.tensors[t], w, region)
                ? std::optional<Box>(toRuntimeBox(region))
                : std::nullopt);
    }
    out.tensors.push_back(std::move(info));
  }
  return llvm::Error::success();
}

/// Op `i` without its per-worker shares.
static llvm::Expected<runtime::OpInfo>
buildOp(const PlanningProblem &problem, unsigned i, ArrayRef<uint8_t> steps) {
  const ProblemOp &op = problem.getOp(i);
  runtime::OpInfo info;
  info.name = problem.getGraph().getOp(i).name;
  info.type = problem.getGraph().getOp(i).type;
  info.inputs.assign(op.inputs.begin(), op.inputs.end());
  info.output = op.output;
  info.kernel = i;
  info.partial = isPartialShare(op, steps);
  // Only for operators without reductions: a reduction's kernel may store
  // into its output (a prefill, a partial sum) before its last read.
  const tdl::OpDecl &decl = op.analysis->getOp();
  if (llvm::all_of(decl.getIndexVars(), [](const tdl::IndexVarDecl *v) {
        return v->isOutput();
      })) {
    SmallVector<Shape, 4> inputShapes;
    for (unsigned t : op.inputs)
      inputShapes.emplace_back(problem.getShape(t).begin(),
                               problem.getShape(t).end());
    info.pointwise = analysis::getPointwiseInputs(decl, inputShapes,
                                                  problem.getShape(op.output));
  }
  bool reducerSet = false;
  for (uint8_t s : steps) {
    if (!op.isReduceStep(s))
      continue;
    runtime::Reducer reducer = toReducer(op.strategies[s].reducer);
    if (reducerSet && reducer != info.reducer)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "op '" + info.name + "' reduces with two different reducers");
    info.reducer = reducer;
    reducerSet = true;
  }
  return std::move(info);
}

/// Worker `digits`'s share of `op` as the runtime's boxes, into `share`
/// (its boxes' memory reused); without `withIteration` the iteration box is
/// left empty (the peak prediction does not read it).
static void fillShare(const PlanningProblem &problem, const ProblemOp &op,
                      ArrayRef<analysis::Range> box,
                      const analysis::WorkerRegions &regions,
                      runtime::OpShare &share, bool withIteration);

static void getShare(const PlanningProblem &problem, const ProblemOp &op,
                     ArrayRef<unsigned> levels, ArrayRef<uint8_t> steps,
                     ArrayRef<unsigned> digits, runtime::OpShare &share,
                     bool withIteration = true) {
  SmallVector<analysis::Range, 8> box;
  analysis::WorkerRegions regions;
  computeOpShare(op, levels, steps, digits, box, regions);
  fillShare(problem, op, box, regions, share, withIteration);
}

/// getShare's boxes from the worker's iteration `box` and `regions`.
static void fillShare(const PlanningProblem &problem, const ProblemOp &op,
                      ArrayRef<analysis::Range> box,
                      const analysis::WorkerRegions &regions,
                      runtime::OpShare &share, bool withIteration) {
  if (withIteration)
    assignRuntimeBox(box, share.iteration);
  else
    share.iteration = Box();
  share.inputs.resize(std::max(op.inputs.size(), regions.inputs.size()));
  for (unsigned pos = 0; pos != share.inputs.size(); ++pos) {
    if (pos < regions.inputs.size()) {
      assignRuntimeBox(regions.inputs[pos], share.inputs[pos]);
      continue;
    }
    // An input the operator never reads has no region: an empty box of the
    // tensor's rank.
    unsigned rank = problem.getTensor(op.inputs[pos]).rank;
    share.inputs[pos].lo.assign(rank, 0);
    share.inputs[pos].hi.assign(rank, 0);
  }
  assignRuntimeBox(regions.output, share.output);
}

llvm::Expected<runtime::ExecutablePlan>
planner::buildExecutableSkeleton(const PlanningProblem &problem,
                                 const plan::Plan &p,
                                 ArrayRef<SmallVector<uint8_t, 4>> steps,
                                 UnexecutedTypes unexecuted) {
  runtime::ExecutablePlan skeleton;
  skeleton.workers = p.workers;
  if (llvm::Error err = buildTensors(problem, p, unexecuted,
                                     /*withBoxes=*/false, skeleton))
    return std::move(err);
  for (unsigned i = 0, e = problem.getOps().size(); i != e; ++i) {
    auto info = buildOp(problem, i, steps[i]);
    if (!info)
      return info.takeError();
    skeleton.ops.push_back(std::move(*info));
  }
  return std::move(skeleton);
}

/// `prog`'s instructions with the binding's coefficient values.
static runtime::OpRule::Index getIndexRule(const analysis::Binding &binding,
                                           const analysis::IndexProgram &prog) {
  using runtime::IndexOp;
  runtime::OpRule::Index index;
  index.kind = prog.kind;
  if (prog.kind == runtime::IndexKind::Whole)
    return index;
  ArrayRef<analysis::AffineForm> forms = binding.getAnalysis().getAffineForms();
  for (const analysis::IndexInst &inst : prog.insts) {
    runtime::OpRule::Inst out;
    out.op = inst.op;
    if (inst.op == IndexOp::Affine) {
      const analysis::AffineForm &form = forms[inst.operand];
      out.constant = binding.getCoefficient(form.constSlot);
      for (const analysis::AffineForm::Term &term : form.terms)
        out.terms.emplace_back(term.var, binding.getCoefficient(term.coefSlot));
    } else if (inst.op == IndexOp::MulConst || inst.op == IndexOp::Div ||
               inst.op == IndexOp::Rem) {
      out.k = binding.getCoefficient(inst.operand);
    }
    index.insts.push_back(std::move(out));
  }
  return index;
}

runtime::OpRule planner::getOpRule(const ProblemOp &op, ArrayRef<uint8_t> steps,
                                   unsigned numLevels) {
  const analysis::Binding &binding = op.binding;
  const analysis::OperatorAnalysis &analysis = binding.getAnalysis();
  runtime::OpRule rule;
  rule.extents.assign(binding.getVarExtents().begin(),
                      binding.getVarExtents().end());
  // As forEachOpShare: a replicate step splits no variable.
  for (unsigned l = 0; l != numLevels; ++l)
    rule.levelVars.push_back(l < steps.size() &&
                                     steps[l] < op.strategies.size()
                                 ? op.strategies[steps[l]].var
                                 : runtime::NoSplit);
  rule.outputRank = analysis.getOutputRank();
  for (unsigned t = 0, e = analysis.getNumTensors(); t != e; ++t)
    rule.inputShapes.emplace_back(binding.getInputShape(t).begin(),
                                  binding.getInputShape(t).end());
  for (const analysis::ReadAnalysis &read : analysis.getReads()) {
    runtime::OpRule::Read out;
    out.tensor = read.tensor;
    out.scopeMask = read.scopeMask;
    for (const analysis::IndexProgram &prog : read.dims)
      out.dims.push_back(getIndexRule(binding, prog));
    rule.reads.push_back(std::move(out));
  }
  return rule;
}

llvm::Expected<runtime::ExecutablePlan>
planner::buildExecutablePlan(const PlanningProblem &problem,
                             const plan::Plan &p,
                             ArrayRef<SmallVector<uint8_t, 4>> steps,
                             UnexecutedTypes unexecuted, int worker) {
  runtime::ExecutablePlan out;
  out.workers = p.workers;
  if (llvm::Error err =
          buildTensors(problem, p, unexecuted, /*withBoxes=*/true, out))
    return std::move(err);
  std::vector<SmallVector<unsigned, 8>> digits(p.workers);
  for (unsigned w = 0; w != p.workers; ++w)
    plan::getWorkerDigits(p.levels, w, digits[w]);
  for (unsigned i = 0, e = problem.getOps().size(); i != e; ++i) {
    auto info = buildOp(problem, i, steps[i]);
    if (!info)
      return info.takeError();
    info->workers.resize(p.workers);
    for (unsigned w = 0; w != p.workers; ++w)
      getShare(problem, problem.getOp(i), p.levels, steps[i], digits[w],
               info->workers[w], worker < 0 || unsigned(worker) == w);
    out.ops.push_back(std::move(*info));
  }
  return std::move(out);
}

namespace {

/// A plan's boxes for runtime::predictPeaks, derived op by op: stored
/// boxes from the plan's regions (plan::getStoredRegion), shares by
/// computeOpShare, and the ops' and tensors' classes (computeOpClasses).
class ProblemBoxes : public runtime::PlanBoxes {
public:
  ProblemBoxes(const PlanningProblem &problem, const plan::Plan &p,
               ArrayRef<SmallVector<uint8_t, 4>> steps)
      : problem(problem), p(p), steps(steps),
        classes(computeOpClasses(problem, p, steps)) {}
  void getStored(unsigned t, std::vector<std::optional<Box>> &out) override {
    out.resize(p.workers);
    plan::forEachStoredRegion(
        p.tensors[t], p.levels,
        [&](unsigned w, const analysis::Region *region) {
          if (!region) {
            out[w].reset();
            return;
          }
          if (!out[w])
            out[w].emplace();
          assignRuntimeBox(*region, *out[w]);
        });
  }
  const std::vector<runtime::OpShare> &getShares(unsigned i) override {
    shares.resize(p.workers);
    const ProblemOp &op = problem.getOp(i);
    forEachOpShare(op, p.levels, steps[i],
                   [&](unsigned w, ArrayRef<analysis::Range> box,
                       const analysis::WorkerRegions &regions, bool same) {
                     if (same)
                       shares[w] = shares[w - 1];
                     else
                       fillShare(problem, op, box, regions, shares[w],
                                 /*withIteration=*/false);
                   });
    return shares;
  }
  int getOpClass(unsigned i) override { return classes.opClass[i]; }
  int getTensorClass(unsigned t) override { return classes.tensorClass[t]; }

private:
  const PlanningProblem &problem;
  const plan::Plan &p;
  ArrayRef<SmallVector<uint8_t, 4>> steps;
  std::vector<runtime::OpShare> shares;
  OpClasses classes;
};

} // namespace

llvm::Expected<std::vector<runtime::WorkerPeak>>
planner::predictPlanPeaks(const PlanningProblem &problem, const plan::Plan &p,
                          ArrayRef<SmallVector<uint8_t, 4>> steps) {
  auto skeleton = buildExecutableSkeleton(problem, p, steps,
                                          UnexecutedTypes::Placeholder);
  if (!skeleton)
    return skeleton.takeError();
  for (const plan::TensorPlan &t : p.tensors)
    if (!plan::hasStoredRegions(t, p.workers))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tensor '" + t.name + "' has " +
                                         Twine(t.regions.size()).str() +
                                         " regions for " +
                                         Twine(p.workers).str() + " workers");
  ProblemBoxes boxes(problem, p, steps);
  std::vector<runtime::WorkerPeak> peaks;
  if (llvm::Error err = applyRuntimeRule([&] {
        peaks = runtime::predictPeaks(*skeleton, p.workers, boxes,
                                      getTensorMemory(problem));
      }))
    return std::move(err);
  return std::move(peaks);
}

std::vector<runtime::TensorMemory>
planner::getTensorMemory(const PlanningProblem &problem) {
  using runtime::MemoryUse;
  const graph::Graph &g = problem.getGraph();
  auto useOf = [&](unsigned t) {
    switch (g.getTensor(t).role) {
    case graph::Role::Param: return MemoryUse::Parameter;
    case graph::Role::State: return MemoryUse::OptimizerState;
    case graph::Role::Grad: return MemoryUse::Gradient;
    default: return MemoryUse::Activation;
    }
  };
  std::vector<runtime::TensorMemory> tensors;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const ProblemTensor &pt = problem.getTensor(t);
    // A next value counts as what it replaces.
    tensors.push_back(runtime::TensorMemory{
        pt.elementSize, useOf(pt.updates >= 0 ? unsigned(pt.updates) : t)});
  }
  return tensors;
}
