//===- Coarsening.h - Repeated structure shares one decision ----*- C++ -*-===//
//
// This file declares the coarsening of a graph for the search: ops (and
// tensors) that are the same computation in the same surroundings, such as
// the unrolled steps of an RNN, the identical blocks of a ResNet stage or
// the layers of a transformer, are put in one class, and a class takes one
// decision. Classes are found by colour refinement (Weisfeiler-Lehman):
// every op starts coloured by its operator, shapes and params, every tensor
// by its shape, element type and role; each round recolours a node by its
// colour and its neighbours' (an op's inputs by position and output, a
// tensor's producer and users), so that after `rounds` rounds two nodes
// share a colour when their surroundings within that many hops agree.
// The cost tables of a class are the sums of its members' (the DP's edge
// elimination), so the search over classes is the search over the graph
// with tied decisions.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_COARSENING_H
#define TOFU_PLANNER_COARSENING_H

#include "tofu/Planner/PlanningProblem.h"

namespace tofu {
namespace planner {

/// A class per op and per tensor; classes of ops and of tensors are
/// numbered separately from 0.
struct Coarsening {
  std::vector<unsigned> opClass;
  std::vector<unsigned> tensorClass;
  unsigned numOpClasses = 0;
  unsigned numTensorClasses = 0;
};

/// Classes of repeated structure after `rounds` rounds of refinement.
Coarsening coarsenRepeatedStructure(const PlanningProblem &problem,
                                    unsigned rounds = 3);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_COARSENING_H
