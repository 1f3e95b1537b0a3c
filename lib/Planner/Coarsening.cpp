//===- Coarsening.cpp - Repeated structure shares one decision ------------===//
//
// This file implements colour refinement over the bipartite op/tensor graph
// with 64-bit hashes, numbering the final colours in order of first
// appearance so that the result does not depend on hash values.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Coarsening.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

using namespace tofu;
using namespace tofu::planner;

static llvm::hash_code hashShape(ArrayRef<int64_t> shape) {
  return llvm::hash_combine_range(shape.begin(), shape.end());
}

/// Numbers colours by first appearance.
static unsigned numberClasses(ArrayRef<uint64_t> colours,
                              std::vector<unsigned> &classes) {
  llvm::DenseMap<uint64_t, unsigned> ids;
  classes.clear();
  for (uint64_t colour : colours)
    classes.push_back(ids.try_emplace(colour, ids.size()).first->second);
  return ids.size();
}

Coarsening planner::coarsenRepeatedStructure(const PlanningProblem &problem,
                                             unsigned rounds) {
  const graph::Graph &g = problem.getGraph();
  unsigned numOps = g.getNumOps(), numTensors = g.getNumTensors();
  std::vector<uint64_t> opColour(numOps), tensorColour(numTensors);
  for (unsigned t = 0; t != numTensors; ++t) {
    const graph::Tensor &tensor = g.getTensor(t);
    tensorColour[t] = llvm::hash_combine(hashShape(tensor.shape),
                                         unsigned(tensor.dtype),
                                         StringRef(tensor.roleName),
                                         g.getProducer(t) < 0);
  }
  for (unsigned i = 0; i != numOps; ++i) {
    const ProblemOp &op = problem.getOp(i);
    // The concrete operator and its bound shapes and params determine the
    // op's steps and regions.
    llvm::hash_code h = llvm::hash_combine(
        op.analysis, hashShape(op.binding.getOutputShape()),
        llvm::hash_combine_range(op.binding.getParams().begin(),
                                 op.binding.getParams().end()));
    for (unsigned t = 0, e = op.inputs.size(); t != e; ++t)
      h = llvm::hash_combine(h, hashShape(op.binding.getInputShape(t)));
    opColour[i] = h;
  }
  for (unsigned r = 0; r != rounds; ++r) {
    std::vector<uint64_t> nextOp(numOps), nextTensor(numTensors);
    for (unsigned i = 0; i != numOps; ++i) {
      const ProblemOp &op = problem.getOp(i);
      llvm::hash_code h = llvm::hash_combine(opColour[i], tensorColour[op.output]);
      for (unsigned t : op.inputs)
        h = llvm::hash_combine(h, tensorColour[t]);
      nextOp[i] = h;
    }
    for (unsigned t = 0; t != numTensors; ++t) {
      int producer = g.getProducer(t);
      SmallVector<uint64_t, 8> users;
      for (unsigned user : g.getUsers(t))
        users.push_back(opColour[user]);
      llvm::sort(users);
      nextTensor[t] = llvm::hash_combine(
          tensorColour[t], producer < 0 ? uint64_t(0) : opColour[producer],
          llvm::hash_combine_range(users.begin(), users.end()));
    }
    opColour = std::move(nextOp);
    tensorColour = std::move(nextTensor);
  }
  Coarsening c;
  c.numOpClasses = numberClasses(opColour, c.opClass);
  c.numTensorClasses = numberClasses(tensorColour, c.tensorClass);
  return c;
}
