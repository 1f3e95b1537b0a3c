//===- FsdpBaseline.cpp - The FSDP (ZeRO-3) baseline ----------------------===//
//
// This file implements the fsdp baseline of docs/CostModel.md: every op
// takes the step on its batch variable at every level (the data-parallel
// baseline's rule, also followed through reshapes that merge or split the
// batch dimension, findBatchVar), tensors with a batch dimension are stored split along it, and
// every other tensor (parameters, their gradients, optimizer state, and
// what is computed from them alone) is stored sharded across all K workers
// instead of replicated. Under the cost model's rules an op that reads a
// sharded parameter fetches the rest of it (ZeRO-3's all-gather), a weight
// gradient, partial over the batch, is delivered to its shard
// (reduce-scatter), and the optimizer's ops each update their own shard.
//
// A sharded tensor's layout, one dimension per level:
//  - the next value of a parameter or state (`updates`) is laid out like
//    it, and a gradient like its parameter, so that the update moves
//    nothing and the next step finds its parameters in place;
//  - a tensor computed by an op without a batch variable follows an input
//    of that op already sharded, through the output variable that alone
//    indexes the input's sharded dimension (an element-wise op or a
//    transpose keeps the shard where it is);
//  - otherwise, at each level, the dimension with the most elements left
//    (ties: the lower dimension), so that shapes smaller than K still
//    spread over every level where they can.
// An op without a batch variable splits, at each level, the output
// variable of its output's sharded dimension there (each worker computes
// its own shard), or is replicated where there is none.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Search.h"

using namespace tofu;
using namespace tofu::planner;

using Dims = SmallVector<uint8_t, 4>;

/// The split (or, for a reduction variable, reduce) step of `op` on `var`,
/// else replicate.
static unsigned findStep(const ProblemOp &op, int var) {
  for (unsigned s = 0, e = op.strategies.size(); s != e; ++s)
    if (int(op.strategies[s].var) == var)
      return s;
  return op.getReplicateStep();
}

/// At each level, the dimension of `shape` with the most elements left.
static Dims shardByShape(ArrayRef<int64_t> shape, ArrayRef<unsigned> levels) {
  SmallVector<int64_t, 4> left(shape.begin(), shape.end());
  Dims dims;
  for (unsigned f : levels) {
    unsigned best = shape.size();
    for (unsigned d = 0, e = shape.size(); d != e; ++d)
      if (left[d] > 1 && (best == shape.size() || left[d] > left[best]))
        best = d;
    if (best != shape.size())
      left[best] = (left[best] + f - 1) / f;
    dims.push_back(best);
  }
  return dims;
}

/// The layout of `op`'s output that follows an input already sharded, or
/// an empty vector.
static Dims followInput(const ProblemOp &op, ArrayRef<Dims> layouts,
                        const std::vector<bool> &assigned,
                        unsigned numLevels) {
  unsigned outputRank = op.analysis->getOutputRank();
  for (const analysis::ReadAnalysis &read : op.analysis->getReads()) {
    unsigned in = op.inputs[read.tensor];
    if (!assigned[in])
      continue;
    Dims dims;
    bool sharded = false;
    for (unsigned l = 0; l != numLevels; ++l) {
      unsigned d = layouts[in][l];
      int var = d < read.dims.size() ? read.dims[d].loneVar : -1;
      if (var < 0 || unsigned(var) >= outputRank) {
        dims.push_back(outputRank);
        continue;
      }
      dims.push_back(var);
      sharded = true;
    }
    if (sharded)
      return dims;
  }
  return {};
}

Assignment planner::makeFsdp(const PlanningProblem &problem, unsigned k) {
  const graph::Graph &g = problem.getGraph();
  unsigned numTensors = g.getNumTensors();
  Assignment a;
  a.levels = getPrimeFactors(k);
  unsigned numLevels = a.levels.size();
  std::vector<int> batchDims(numTensors, -1);
  std::vector<Dims> layouts(numTensors);
  std::vector<bool> assigned(numTensors, false);
  auto assign = [&](unsigned t, Dims dims) {
    layouts[t] = std::move(dims);
    assigned[t] = true;
  };
  // Graph inputs: the batch of `input` tensors, every other one sharded.
  for (unsigned t = 0; t != numTensors; ++t) {
    if (problem.getTensor(t).producer >= 0)
      continue;
    unsigned rank = problem.getTensor(t).rank;
    if (g.getTensor(t).role == graph::Role::Input && rank) {
      batchDims[t] = 0;
      assign(t, Dims(numLevels, 0));
    } else {
      assign(t, shardByShape(problem.getShape(t), a.levels));
    }
  }
  for (const ProblemOp &op : problem.getOps()) {
    unsigned out = op.output;
    const ProblemTensor &tensor = problem.getTensor(out);
    unsigned outputRank = op.analysis->getOutputRank();
    int var = findBatchVar(op, batchDims, /*throughReshapes=*/true);
    unsigned batchStep = findStep(op, var);
    if (var >= 0 && batchStep != op.getReplicateStep()) {
      a.opSteps.emplace_back(numLevels, batchStep);
      if (unsigned(var) < outputRank) {
        batchDims[out] = var;
        assign(out, Dims(numLevels, var));
        continue;
      }
    }
    // A sharded output: like the tensor it updates or is the gradient of,
    // else following a sharded input, else by its shape.
    Dims dims;
    for (int of : {tensor.updates, tensor.gradOf})
      if (dims.empty() && of >= 0 && assigned[of] &&
          problem.getTensor(of).rank == tensor.rank)
        dims = layouts[of];
    if (dims.empty() && var < 0)
      dims = followInput(op, layouts, assigned, numLevels);
    if (dims.empty())
      dims = shardByShape(problem.getShape(out), a.levels);
    if (var < 0 || batchStep == op.getReplicateStep()) {
      Dims steps;
      for (unsigned l = 0; l != numLevels; ++l)
        steps.push_back(findStep(op, dims[l] < outputRank ? int(dims[l]) : -1));
      // Splitting a reduction variable is not a split of the output: keep
      // only output variables' splits.
      for (unsigned l = 0; l != numLevels; ++l)
        if (op.isReduceStep(steps[l]))
          steps[l] = op.getReplicateStep();
      a.opSteps.push_back(steps);
    }
    assign(out, std::move(dims));
  }
  for (unsigned t = 0; t != numTensors; ++t)
    a.tensorDims.push_back(assigned[t] ? layouts[t]
                                       : Dims(numLevels, problem.getTensor(t).rank));
  return a;
}
