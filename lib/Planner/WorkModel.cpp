//===- WorkModel.cpp - How much work an op's share is ---------------------===//
//
// This file implements WorkModel (WorkModel.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/WorkModel.h"
#include "tofu/Analysis/Regions.h"
#include "tofu/Planner/Assignment.h"
#include "tofu/TDL/AST.h"
#include "tofu/TDL/ExprWalk.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::planner;

WorkModel::WorkModel(const ProblemOp &op) : op(op) {
  const tdl::OpDecl &decl = op.analysis->getOp();
  auto vars = decl.getIndexVars();
  tdl::walkExpr(decl.getBody(), [&](const tdl::Expr &e) {
    auto *reduce = dyn_cast<tdl::ReduceExpr>(&e);
    if (!reduce)
      return;
    if (auto *call = dyn_cast<tdl::CallExpr>(&reduce->getBody()))
      if (call->getBuiltin() == tdl::Builtin::Select)
        if (auto *cond = dyn_cast<tdl::BinaryExpr>(&call->getArg(0)))
          oneHot |= cond->getOp() == tdl::BinaryOp::Eq &&
                    (isa<tdl::TensorReadExpr>(cond->getLHS()) ||
                     isa<tdl::TensorReadExpr>(cond->getRHS()));
    SmallVector<unsigned, 4> used;
    tdl::walkExpr(reduce->getBody(), [&](const tdl::Expr &inner) {
      auto *name = dyn_cast<tdl::NameExpr>(&inner);
      if (!name || !name->getIndexVar())
        return;
      for (unsigned v = 0, n = vars.size(); v != n; ++v)
        if (&*vars[v] == name->getIndexVar() && !llvm::is_contained(used, v))
          used.push_back(v);
    });
    reductionVars.push_back(std::move(used));
  });
}

double WorkModel::getPoints(ArrayRef<analysis::Range> box) const {
  if (oneHot) {
    analysis::WorkerRegions regions;
    analysis::computeWorkerRegions(op.binding, box, regions);
    double points = double(plan::getVolume(regions.output));
    for (const auto &input : regions.inputs)
      points += double(plan::getVolume(input));
    return points;
  }
  double points = 1;
  for (unsigned v = 0, e = op.analysis->getOutputRank(); v != e; ++v)
    points *= double(box[v].size());
  for (const auto &used : reductionVars) {
    double n = 1;
    for (unsigned v : used)
      n *= double(box[v].size());
    points += n;
  }
  return points;
}

double WorkModel::getElements(ArrayRef<analysis::Range> box) const {
  analysis::WorkerRegions regions;
  analysis::computeWorkerRegions(op.binding, box, regions);
  double elements = double(plan::getVolume(regions.output));
  for (const auto &input : regions.inputs)
    elements += double(plan::getVolume(input));
  return elements;
}

double WorkModel::getGemmElements(ArrayRef<analysis::Range> box,
                                  bool convolution) const {
  analysis::WorkerRegions full, one;
  analysis::computeWorkerRegions(op.binding, box, full);
  if (full.inputs.empty())
    return getElements(box);
  // Is `v` a batch variable: does taking one value of it shrink to one the
  // dimensions it decides (a convolution: dimension 0 of the first input;
  // a GEMM: some dimension of every input and of the output)?
  auto shrinks = [](const analysis::Region &a, const analysis::Region &b) {
    for (size_t d = 0; d != a.size(); ++d)
      if (b[d].size() < a[d].size())
        return true;
    return false;
  };
  SmallVector<analysis::Range, 8> callBox(box.begin(), box.end());
  double calls = 1;
  for (unsigned v = 0, e = box.size(); v != e; ++v) {
    if (box[v].size() <= 1)
      continue;
    SmallVector<analysis::Range, 8> probe(box.begin(), box.end());
    probe[v].hi = probe[v].lo + 1;
    analysis::computeWorkerRegions(op.binding, probe, one);
    bool batch;
    if (convolution) {
      batch = !full.inputs[0].empty() &&
              one.inputs[0][0].size() < full.inputs[0][0].size();
    } else {
      batch = op.analysis->getOutputRank() > v &&
              shrinks(full.output, one.output);
      for (size_t i = 0; batch && i != full.inputs.size(); ++i)
        batch = shrinks(full.inputs[i], one.inputs[i]);
    }
    if (batch) {
      calls *= double(box[v].size());
      callBox[v] = probe[v];
    }
  }
  return calls * getElements(callBox);
}

llvm::Expected<std::vector<std::vector<double>>>
planner::getWorkerOpSeconds(
    const PlanningProblem &problem, const plan::Plan &p,
    llvm::function_ref<double(unsigned op, const WorkModel &work,
                              ArrayRef<analysis::Range> box)>
        seconds) {
  std::vector<std::vector<double>> perOp(p.ops.size());
  SmallVector<unsigned, 4> digits;
  SmallVector<analysis::Range, 8> box;
  for (unsigned i = 0, m = p.ops.size(); i != m; ++i) {
    const ProblemOp &op = problem.getOp(i);
    auto steps = resolveSteps(op, p.ops[i].steps);
    if (!steps)
      return steps.takeError();
    WorkModel work(op);
    perOp[i].resize(p.workers);
    for (unsigned w = 0; w != p.workers; ++w) {
      plan::getWorkerDigits(p.levels, w, digits);
      getOpBox(op, p.levels, *steps, digits, box);
      perOp[i][w] = seconds(i, work, box);
    }
  }
  return perOp;
}

llvm::Expected<double> planner::getBusiestWorkerSeconds(
    const PlanningProblem &problem, const plan::Plan &p,
    llvm::function_ref<double(unsigned op, const WorkModel &work,
                              ArrayRef<analysis::Range> box)>
        seconds) {
  auto perOp = getWorkerOpSeconds(problem, p, seconds);
  if (!perOp)
    return perOp.takeError();
  std::vector<double> perWorker(p.workers, 0);
  for (const std::vector<double> &op : *perOp)
    for (unsigned w = 0; w != p.workers; ++w)
      perWorker[w] += op[w];
  return *std::max_element(perWorker.begin(), perWorker.end());
}
