//===- GraphSummary.h - A readable overview of a graph ----------*- C++ -*-===//
//
// This file declares what `tofu-graph --emit=summary` prints: op and tensor
// counts, tensors, elements and bytes per role, and a histogram of op types.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_GRAPHSUMMARY_H
#define TOFU_GRAPH_GRAPHSUMMARY_H

#include "tofu/Graph/Graph.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tofu {
namespace graph {

/// Prints the summary of `g`.
void printSummary(llvm::raw_ostream &os, const Graph &g);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_GRAPHSUMMARY_H
