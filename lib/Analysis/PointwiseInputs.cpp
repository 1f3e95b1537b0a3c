//===- PointwiseInputs.cpp - Inputs read at the output's own index --------===//
//
// This file implements getPointwiseInputs from the operator's body: a read
// is at the output's own index when its indices are the output's variables
// in order, one per output dimension.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/PointwiseInputs.h"
#include "tofu/TDL/ExprWalk.h"

using namespace tofu;
using namespace tofu::tdl;

std::vector<bool> analysis::getPointwiseInputs(const OpDecl &op,
                                               ArrayRef<Shape> inputShapes,
                                               ArrayRef<int64_t> outputShape) {
  unsigned rank = op.getOutputRank();
  std::vector<bool> pointwise(inputShapes.size(), false);
  for (unsigned p = 0; p != pointwise.size(); ++p)
    pointwise[p] = ArrayRef<int64_t>(inputShapes[p]) == outputShape;
  walkExpr(op.getBody(), [&](const Expr &e) {
    const auto *read = dyn_cast<TensorReadExpr>(&e);
    if (!read || !read->getTensor())
      return;
    unsigned p = read->getTensor()->getPosition();
    if (p >= pointwise.size())
      return;
    bool same = read->getNumIndices() == rank;
    for (unsigned d = 0; same && d != rank; ++d) {
      const auto *name = dyn_cast<NameExpr>(&read->getIndex(d));
      same = name && !name->isEllipsis() && name->getIndexVar() &&
             name->getIndexVar()->getId() == d &&
             name->getIndexVar()->isOutput();
    }
    if (!same)
      pointwise[p] = false;
  });
  return pointwise;
}
