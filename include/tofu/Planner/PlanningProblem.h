//===- PlanningProblem.h - A graph ready to be partitioned ------*- C++ -*-===//
//
// This file declares PlanningProblem, the problem model the searches, the
// cost model and the verifier share: every op of a verified graph bound to
// its concrete TDL operator (instance, analysis, shapes and params), the
// steps it may take at a level (its partition strategies, and replicate),
// and every tensor's shape, element size and training-step relations
// (`grad_of`, `updates`). Building it is where the graph's ops meet the
// analysis; everything after is integer arithmetic on regions.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_PLANNINGPROBLEM_H
#define TOFU_PLANNER_PLANNINGPROBLEM_H

#include "tofu/Analysis/Binding.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Plan/Plan.h"

#include <memory>
#include <vector>

namespace tofu {
class DiagnosticEngine;
namespace graph {
class SpecLibrary;
} // namespace graph

namespace planner {

/// One op of the graph, bound to its concrete operator.
struct ProblemOp {
  unsigned graphOp;
  const analysis::OperatorAnalysis *analysis;
  analysis::Binding binding;
  /// Input tensors by operator position, and the output tensor.
  SmallVector<unsigned, 4> inputs;
  unsigned output;
  /// The partition strategies (analysis order); the step index
  /// `strategies.size()` is `replicate`.
  SmallVector<analysis::Strategy, 8> strategies;

  unsigned getNumSteps() const { return strategies.size() + 1; }
  unsigned getReplicateStep() const { return strategies.size(); }
  bool isReduceStep(unsigned s) const {
    return s < strategies.size() &&
           strategies[s].kind == analysis::Strategy::Kind::Reduce;
  }
  /// The name of index variable `var` in the concrete operator.
  StringRef getVarName(unsigned var) const;
  /// The plan step of step index `s`.
  plan::Step getStep(unsigned s) const;
};

/// One tensor of the graph.
struct ProblemTensor {
  unsigned rank;
  unsigned elementSize;
  /// The parameter or state this tensor is the next value of, or -1.
  int updates = -1;
  /// The tensor this one is the gradient of, or -1.
  int gradOf = -1;
  /// The op producing it, or -1 for a graph input.
  int producer = -1;
};

/// A verified graph bound to its operators.
class PlanningProblem {
public:
  /// Binds every op of `g` (which must have passed graph::verifyGraph) to
  /// its operator. Reports what cannot be bound and returns null.
  static std::unique_ptr<PlanningProblem>
  build(const graph::Graph &g, graph::SpecLibrary &specs,
        DiagnosticEngine &diags);

  const graph::Graph &getGraph() const { return g; }
  ArrayRef<ProblemOp> getOps() const { return ops; }
  ArrayRef<ProblemTensor> getTensors() const { return tensors; }
  const ProblemOp &getOp(unsigned i) const { return ops[i]; }
  const ProblemTensor &getTensor(unsigned i) const { return tensors[i]; }
  ArrayRef<int64_t> getShape(unsigned t) const {
    return g.getTensor(t).shape;
  }
  /// Elements of tensor `t`.
  int64_t getNumElements(unsigned t) const {
    return g.getTensor(t).getNumElements();
  }
  /// Bytes of the whole graph (every tensor once).
  int64_t getTotalBytes() const;

private:
  explicit PlanningProblem(const graph::Graph &g) : g(g) {}
  bool bindOp(unsigned i, graph::SpecLibrary &specs, DiagnosticEngine &diags);
  void bindTensors();

  const graph::Graph &g;
  std::vector<ProblemOp> ops;
  std::vector<ProblemTensor> tensors;
};

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_PLANNINGPROBLEM_H
