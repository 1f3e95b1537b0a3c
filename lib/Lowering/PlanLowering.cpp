//===- PlanLowering.cpp - From a plan to an ExecutablePlan ----------------===//
//
// This file implements lowerPlan: it checks the plan against the graph with
// the cost model's resolvePlanSteps, then records per worker each op's
// share (planner::computeOpShare) and each tensor's stored region, and the
// tensors' lifetimes as the cost model's liveness estimate defines them.
//
//===----------------------------------------------------------------------===//

#include "tofu/Lowering/PlanLowering.h"
#include "tofu/Planner/CostModel.h"

using namespace tofu;
using namespace tofu::lowering;
using runtime::Box;

llvm::Expected<runtime::ElementType> lowering::getElementType(DType dtype) {
  using runtime::ElementType;
  switch (dtype) {
  case DType::F32: return ElementType::F32;
  case DType::F64: return ElementType::F64;
  case DType::I64: return ElementType::I64;
  case DType::I32: return ElementType::I32;
  case DType::I8: return ElementType::I8;
  case DType::Bool: return ElementType::Bool;
  default:
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "dtype " + getDTypeName(dtype).str() +
                                       " is not executed by the runtime yet");
  }
}

static Box toBox(ArrayRef<analysis::Range> region) {
  Box box;
  for (const analysis::Range &r : region) {
    box.lo.push_back(r.lo);
    box.hi.push_back(std::max(r.lo, r.hi));
  }
  return box;
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

static llvm::Error lowerTensors(const planner::PlanningProblem &problem,
                                const plan::Plan &p,
                                runtime::ExecutablePlan &out) {
  const graph::Graph &g = problem.getGraph();
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const graph::Tensor &gt = g.getTensor(t);
    const planner::ProblemTensor &pt = problem.getTensor(t);
    runtime::TensorInfo info;
    info.name = gt.name;
    auto type = getElementType(gt.dtype);
    if (!type)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tensor '" + gt.name + "': " +
                                         llvm::toString(type.takeError()));
    info.type = *type;
    info.shape.assign(gt.shape.begin(), gt.shape.end());
    info.graphInput = pt.producer < 0;
    // As the cost model's liveness estimate (docs/CostModel.md).
    info.persistent = info.graphInput
                          ? gt.role != graph::Role::Input
                          : gt.role == graph::Role::Output || pt.updates >= 0 ||
                                g.getUsers(t).empty();
    info.updates = pt.updates;
    for (const auto &region : p.tensors[t].regions)
      info.stored.push_back(region ? std::optional<Box>(toBox(*region))
                                   : std::nullopt);
    out.tensors.push_back(std::move(info));
  }
  return llvm::Error::success();
}

llvm::Expected<runtime::ExecutablePlan>
lowering::lowerPlan(const planner::PlanningProblem &problem,
                    const plan::Plan &p) {
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = planner::resolvePlanSteps(problem, p, steps))
    return std::move(err);
  runtime::ExecutablePlan out;
  out.workers = p.workers;
  out.commBytes = p.commBytes;
  out.peakBytesPerWorker = p.peakBytesPerWorker;
  if (llvm::Error err = lowerTensors(problem, p, out))
    return std::move(err);
  std::vector<SmallVector<unsigned, 8>> digits(p.workers);
  for (unsigned w = 0; w != p.workers; ++w)
    plan::getWorkerDigits(p.levels, w, digits[w]);
  SmallVector<analysis::Range, 8> box;
  analysis::WorkerRegions regions;
  for (unsigned i = 0, e = problem.getOps().size(); i != e; ++i) {
    const planner::ProblemOp &op = problem.getOp(i);
    runtime::OpInfo info;
    info.name = problem.getGraph().getOp(i).name;
    info.type = problem.getGraph().getOp(i).type;
    info.inputs.assign(op.inputs.begin(), op.inputs.end());
    info.output = op.output;
    info.kernel = i;
    info.partial = planner::isPartialShare(op, steps[i]);
    bool reducerSet = false;
    for (uint8_t s : steps[i]) {
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
    for (unsigned w = 0; w != p.workers; ++w) {
      planner::computeOpShare(op, p.levels, steps[i], digits[w], box, regions);
      runtime::OpShare share;
      share.iteration = toBox(box);
      for (const analysis::Region &r : regions.inputs)
        share.inputs.push_back(toBox(r));
      // An input the operator never reads has no region: an empty box of
      // the tensor's rank.
      for (unsigned pos = 0; pos != op.inputs.size(); ++pos)
        if (share.inputs.size() <= pos)
          share.inputs.push_back(
              Box{std::vector<int64_t>(problem.getTensor(op.inputs[pos]).rank),
                  std::vector<int64_t>(problem.getTensor(op.inputs[pos]).rank)});
      share.output = toBox(regions.output);
      info.workers.push_back(std::move(share));
    }
    out.ops.push_back(std::move(info));
  }
  return std::move(out);
}

plan::Plan lowering::makeSingleWorkerPlan(const planner::PlanningProblem &problem) {
  const graph::Graph &g = problem.getGraph();
  plan::Plan p;
  p.workers = 1;
  for (const graph::Op &op : g.getOps())
    p.ops.push_back(plan::OpPlan{op.name, {}, {}});
  for (const graph::Tensor &t : g.getTensors()) {
    analysis::Region whole;
    for (int64_t extent : t.shape)
      whole.push_back(analysis::Range{0, extent});
    p.tensors.push_back(plan::TensorPlan{t.name, {whole}});
  }
  return p;
}
