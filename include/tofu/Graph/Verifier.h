//===- Verifier.h - Check a graph's structure and its ops' specs -*- C++ -*-===//
//
// This file declares the graph verifier, in two passes:
//  - structure: unique tensor and op names, non-negative dimensions, one
//    output per op, every op input and output naming a tensor, no tensor
//    produced twice, every tensor either produced by an op or a graph input
//    (role input, param or state, which no op produces), no cycles, and
//    every `"updates": "P"` naming a param or state tensor P of the same
//    shape and dtype, updated by no other tensor;
//  - specs: every op's type is an operator of the loaded TDL specs, its
//    inputs match the operator's tensors in number and rank, its params
//    match the operator's by name (integers where the operator takes
//    integers), and the output shape is the one the operator's reads
//    determine (docs/GraphFormat.md, "Shape agreement").
// Every diagnostic names the op or tensor and points at its JSON.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_VERIFIER_H
#define TOFU_GRAPH_VERIFIER_H

#include "tofu/Graph/Graph.h"

namespace tofu {
class DiagnosticEngine;

namespace graph {
class SpecLibrary;

/// Checks names and dataflow, then verifyUpdates. Returns false if any
/// error was reported.
bool verifyStructure(const Graph &g, DiagnosticEngine &diags);

/// Checks each tensor's `"updates"` field (VerifyUpdates.cpp). Returns
/// false if any error was reported.
bool verifyUpdates(const Graph &g, DiagnosticEngine &diags);

/// Checks every op against its operator in `specs`. Expects a graph that
/// passed verifyStructure. Returns false if any error was reported.
bool verifySpecs(const Graph &g, SpecLibrary &specs, DiagnosticEngine &diags);

/// verifyStructure, then (if it passed) verifySpecs.
bool verifyGraph(const Graph &g, SpecLibrary &specs, DiagnosticEngine &diags);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_VERIFIER_H
