//===- OpClasses.cpp - Ops and tensors a plan treats alike ----------------===//
//
// This file implements computeOpClasses: each tensor and op is keyed by
// what its regions and boxes are derived from, and equal keys share a
// class.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/OpClasses.h"

#include <map>

using namespace tofu;
using namespace tofu::planner;

namespace {

/// Numbers keys in order of first appearance.
class KeyNumbering {
public:
  unsigned getClass(std::vector<int64_t> key) {
    return keys.emplace(std::move(key), unsigned(keys.size())).first->second;
  }
  /// A class no key has.
  unsigned getUniqueClass() { return getClass({-1, int64_t(keys.size())}); }
  unsigned size() const { return keys.size(); }

private:
  std::map<std::vector<int64_t>, unsigned> keys;
};

void appendShape(std::vector<int64_t> &key, ArrayRef<int64_t> shape) {
  key.push_back(shape.size());
  key.insert(key.end(), shape.begin(), shape.end());
}

} // namespace

OpClasses planner::computeTensorClasses(const PlanningProblem &problem,
                                        const plan::Plan &p) {
  OpClasses classes;
  KeyNumbering tensorKeys;
  std::vector<int64_t> key;
  for (unsigned t = 0, e = problem.getTensors().size(); t != e; ++t) {
    const plan::TensorPlan &tp = p.tensors[t];
    if (!tp.layout || !tp.regions.empty()) {
      classes.tensorClass.push_back(tensorKeys.getUniqueClass());
      continue;
    }
    key.clear();
    key.push_back(problem.getTensor(t).elementSize);
    appendShape(key, problem.getShape(t));
    key.insert(key.end(), tp.layout->begin(), tp.layout->end());
    classes.tensorClass.push_back(tensorKeys.getClass(key));
  }
  classes.numTensorClasses = tensorKeys.size();
  return classes;
}

OpClasses planner::computeOpClasses(const PlanningProblem &problem,
                                    const plan::Plan &p,
                                    ArrayRef<SmallVector<uint8_t, 4>> steps) {
  OpClasses classes = computeTensorClasses(problem, p);
  std::vector<int64_t> key;
  KeyNumbering opKeys;
  for (unsigned i = 0, e = problem.getOps().size(); i != e; ++i) {
    const ProblemOp &op = problem.getOp(i);
    key.clear();
    key.push_back(int64_t(reinterpret_cast<uintptr_t>(op.analysis)));
    key.push_back(op.inputs.size());
    for (unsigned pos = 0; pos != op.inputs.size(); ++pos) {
      appendShape(key, op.binding.getInputShape(pos));
      key.push_back(classes.tensorClass[op.inputs[pos]]);
    }
    appendShape(key, op.binding.getOutputShape());
    key.push_back(classes.tensorClass[op.output]);
    appendShape(key, op.binding.getParams());
    key.insert(key.end(), steps[i].begin(), steps[i].end());
    classes.opClass.push_back(opKeys.getClass(key));
  }
  classes.numOpClasses = opKeys.size();
  return classes;
}
