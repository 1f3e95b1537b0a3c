//===- Baselines.cpp - Data-parallel and replicated plans -----------------===//
//
// This file implements the baselines of docs/CostModel.md. Data
// parallelism follows the batch dimension: dimension 0 of every `input`
// tensor, then through each op in graph order: the op's batch variable is
// the first variable that alone indexes an input's batch dimension; when it
// is an output variable the output carries the batch in that dimension,
// when it is a reduction variable (a weight gradient) the op reduces over
// it and the output has no batch dimension.
//
// The Megatron baseline lays weights out as Megatron-LM's tensor
// parallelism does; see getMegatronTensorDims.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Search.h"

using namespace tofu;
using namespace tofu::planner;

int planner::findBatchVar(const ProblemOp &op, ArrayRef<int> batchDims,
                          bool throughReshapes) {
  for (const analysis::ReadAnalysis &read : op.analysis->getReads()) {
    int dim = batchDims[op.inputs[read.tensor]];
    if (dim >= 0 && unsigned(dim) < read.dims.size() &&
        read.dims[dim].loneVar >= 0)
      return read.dims[dim].loneVar;
  }
  if (!throughReshapes || op.analysis->getOutputRank() == 0)
    return -1;
  // A reshape that merges the batch dimension with others (`i div 128`) or
  // splits it (`b * 128 + s`) keeps the batch outermost: the output's
  // dimension 0, when its variable occurs in the batch dimension's index.
  for (const analysis::ReadAnalysis &read : op.analysis->getReads()) {
    int dim = batchDims[op.inputs[read.tensor]];
    if (dim >= 0 && unsigned(dim) < read.dims.size() &&
        (read.dims[dim].varMask & 1))
      return 0;
  }
  return -1;
}

/// The step index of `op` that splits or reduces `var`, else replicate.
static unsigned findStep(const ProblemOp &op, int var) {
  for (unsigned s = 0, e = op.strategies.size(); s != e; ++s)
    if (int(op.strategies[s].var) == var)
      return s;
  return op.getReplicateStep();
}

Assignment planner::makeDataParallel(const PlanningProblem &problem,
                                     unsigned k, bool throughReshapes) {
  const graph::Graph &g = problem.getGraph();
  std::vector<int> batchDims(g.getNumTensors(), -1);
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t)
    if (g.getTensor(t).role == graph::Role::Input && problem.getTensor(t).rank)
      batchDims[t] = 0;
  Assignment a;
  a.levels = getPrimeFactors(k);
  unsigned numLevels = a.levels.size();
  for (const ProblemOp &op : problem.getOps()) {
    int var = findBatchVar(op, batchDims, throughReshapes);
    unsigned step = findStep(op, var);
    a.opSteps.emplace_back(numLevels, step);
    if (var >= 0 && unsigned(var) < op.analysis->getOutputRank() &&
        step != op.getReplicateStep())
      batchDims[op.output] = var;
  }
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    unsigned dim = batchDims[t] >= 0 ? batchDims[t] : problem.getTensor(t).rank;
    a.tensorDims.emplace_back(numLevels, dim);
  }
  return a;
}

/// The rank-2 parameter `t` is, directly or through `t` ops (PyTorch's
/// transpose of a Linear weight), or -1.
static int findWeight(const graph::Graph &g, ArrayRef<int> transposedFrom,
                      unsigned t) {
  while (transposedFrom[t] >= 0)
    t = transposedFrom[t];
  const graph::Tensor &tensor = g.getTensor(t);
  return tensor.role == graph::Role::Param && tensor.shape.size() == 2 ? t : -1;
}

std::vector<int> planner::getMegatronTensorDims(const PlanningProblem &problem) {
  // Megatron-LM splits each pair of linear layers so that the activation
  // between them never needs gathering: the first (a column-parallel layer:
  // attention's q, k, v; the MLP's first layer) splits its weight's output
  // features (dimension 0 of a [out, in] weight) and leaves its output
  // split; the second (row-parallel: attention's output projection, the
  // MLP's second layer), whose input arrives split, splits its input
  // features (dimension 1), and its output is summed whole. Which is which
  // follows the data: a linear layer whose activation input descends from
  // a column-parallel output without an intervening row-parallel layer is
  // row-parallel. Embeddings split their vocabulary (dimension 0). A
  // weight is classified by its first use (the forward op); its gradient
  // and its update follow it.
  const graph::Graph &g = problem.getGraph();
  unsigned numTensors = g.getNumTensors();
  std::vector<int> dims(numTensors, -1), transposedFrom(numTensors, -1);
  std::vector<bool> split(numTensors, false);
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    const graph::Op &op = g.getOp(i);
    int out = op.getOutput();
    if (out < 0)
      continue;
    if (op.type == "t" && op.inputs.size() == 1) {
      transposedFrom[out] = op.inputs[0].index;
      split[out] = split[op.inputs[0].index];
      continue;
    }
    bool anySplit = llvm::any_of(
        op.inputs, [&](const graph::TensorRef &in) { return split[in.index]; });
    bool linear = op.type == "mm" || op.type == "addmm" ||
                  op.type == "matmul" || op.type == "linear";
    int weight = -1;
    for (const graph::TensorRef &in : op.inputs)
      if ((linear || op.type == "embedding") && weight < 0)
        weight = findWeight(g, transposedFrom, in.index);
    if (weight < 0 || dims[weight] >= 0) {
      split[out] = anySplit;
      continue;
    }
    if (op.type == "embedding") {
      dims[weight] = 0;
      split[out] = false;
      continue;
    }
    // Column-parallel unless the activation arrives split.
    bool rowParallel = anySplit;
    dims[weight] = rowParallel ? 1 : 0;
    split[out] = !rowParallel;
    // A column-parallel layer's bias is split with its outputs.
    if (!rowParallel && op.type == "addmm") {
      int bias = op.inputs[0].index;
      if (g.getTensor(bias).role == graph::Role::Param &&
          g.getTensor(bias).shape.size() == 1)
        dims[bias] = 0;
    }
  }
  for (unsigned t = 0; t != numTensors; ++t) {
    const ProblemTensor &tensor = problem.getTensor(t);
    for (int of : {tensor.gradOf, tensor.updates})
      if (of >= 0 && dims[of] >= 0 && dims[t] < 0 &&
          problem.getTensor(of).rank == tensor.rank)
        dims[t] = dims[of];
  }
  return dims;
}

Assignment planner::makeReplicated(const PlanningProblem &problem, unsigned k) {
  Assignment a;
  a.levels = getPrimeFactors(k);
  unsigned numLevels = a.levels.size();
  for (const ProblemOp &op : problem.getOps())
    a.opSteps.emplace_back(numLevels, op.getReplicateStep());
  for (const ProblemTensor &t : problem.getTensors())
    a.tensorDims.emplace_back(numLevels, t.rank);
  return a;
}

SmallVector<unsigned, 4> planner::getPrimeFactors(unsigned k) {
  SmallVector<unsigned, 4> factors;
  for (unsigned p = 2; p * p <= k; ++p)
    while (k % p == 0) {
      factors.push_back(p);
      k /= p;
    }
  if (k > 1)
    factors.push_back(k);
  std::sort(factors.rbegin(), factors.rend());
  return factors;
}

std::vector<SmallVector<unsigned, 4>>
planner::getLevelCandidates(unsigned k, unsigned maxOrders,
                            unsigned maxSingleLevel) {
  std::vector<SmallVector<unsigned, 4>> candidates;
  if (k <= 1)
    return {SmallVector<unsigned, 4>()};
  SmallVector<unsigned, 4> order = getPrimeFactors(k);
  std::sort(order.begin(), order.end());
  std::vector<SmallVector<unsigned, 4>> orders;
  do
    orders.push_back(order);
  while (std::next_permutation(order.begin(), order.end()));
  // Largest factor first is the order of the data-parallel baseline and
  // the one Theorem 1 favours: try it first.
  std::reverse(orders.begin(), orders.end());
  for (unsigned i = 0, e = std::min<size_t>(orders.size(), maxOrders); i != e;
       ++i)
    candidates.push_back(orders[i]);
  if (k <= maxSingleLevel && candidates.front().size() > 1)
    candidates.push_back({k});
  return candidates;
}
