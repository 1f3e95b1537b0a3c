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
