//===- PlanningProblem.cpp - A graph ready to be partitioned --------------===//
//
// This file implements binding a verified graph's ops to their concrete
// operators and reading the tensors' training-step relations.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/PlanningProblem.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/JSON.h"

using namespace tofu;
using namespace tofu::planner;

StringRef ProblemOp::getVarName(unsigned var) const {
  return analysis->getOp().getIndexVars()[var]->getName();
}

plan::Step ProblemOp::getStep(unsigned s) const {
  if (s >= strategies.size())
    return plan::Step::replicate();
  StringRef var = getVarName(strategies[s].var);
  return strategies[s].kind == analysis::Strategy::Kind::Split
             ? plan::Step::split(var)
             : plan::Step::reduce(var);
}

/// The tensor an extra field such as `"updates": "fc1.weight"` names, or -1.
static int lookupRelation(const graph::Graph &g, const graph::Tensor &t,
                          StringRef key) {
  for (const graph::ExtraField &field : t.extras) {
    if (field.key != key)
      continue;
    auto value = llvm::json::parse(field.json);
    if (!value) {
      llvm::consumeError(value.takeError());
      return -1;
    }
    if (auto name = value->getAsString())
      return g.lookupTensor(*name);
  }
  return -1;
}

bool PlanningProblem::bindOp(unsigned i, graph::SpecLibrary &specs,
                             DiagnosticEngine &diags) {
  const graph::Op &op = g.getOp(i);
  SmallVector<Shape, 4> inputShapes = g.getInputShapes(op);
  const graph::Tensor &out = g.getTensor(op.getOutput());
  std::string where = "op '" + op.name + "' (operator '" + op.type + "'): ";
  auto instance = specs.instantiate(g, op);
  if (!instance) {
    diags.error(op.loc, where + llvm::toString(instance.takeError()));
    return false;
  }
  auto analysis = specs.getAnalysis(*(*instance)->op);
  if (!analysis) {
    diags.error(op.loc, where + llvm::toString(analysis.takeError()));
    return false;
  }
  auto binding = analysis::Binding::create(**analysis, inputShapes, out.shape,
                                           (*instance)->intParams);
  if (!binding) {
    diags.error(op.loc, where + llvm::toString(binding.takeError()));
    return false;
  }
  ProblemOp bound{i, *analysis, std::move(*binding), {}, unsigned(op.getOutput()),
                  {}};
  for (const graph::TensorRef &ref : op.inputs)
    bound.inputs.push_back(ref.index);
  bound.strategies.append((*analysis)->getStrategies().begin(),
                          (*analysis)->getStrategies().end());
  ops.push_back(std::move(bound));
  return true;
}

void PlanningProblem::bindTensors() {
  tensors.resize(g.getNumTensors());
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const graph::Tensor &tensor = g.getTensor(t);
    ProblemTensor &pt = tensors[t];
    pt.rank = tensor.shape.size();
    pt.elementSize = getDTypeSize(tensor.dtype);
    pt.updates = lookupRelation(g, tensor, "updates");
    pt.gradOf = lookupRelation(g, tensor, "grad_of");
    pt.producer = g.getProducer(t);
  }
}

std::unique_ptr<PlanningProblem>
PlanningProblem::build(const graph::Graph &g, graph::SpecLibrary &specs,
                       DiagnosticEngine &diags) {
  std::unique_ptr<PlanningProblem> problem(new PlanningProblem(g));
  problem->ops.reserve(g.getNumOps());
  bool ok = true;
  for (unsigned i = 0, e = g.getNumOps(); i != e && !diags.shouldStop(); ++i)
    ok &= problem->bindOp(i, specs, diags);
  if (!ok)
    return nullptr;
  problem->bindTensors();
  return problem;
}

int64_t PlanningProblem::getTotalBytes() const {
  int64_t total = 0;
  for (unsigned t = 0, e = tensors.size(); t != e; ++t)
    total += getNumElements(t) * tensors[t].elementSize;
  return total;
}
