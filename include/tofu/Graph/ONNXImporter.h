//===- ONNXImporter.h - ONNX inference graphs into the Graph IR -*- C++ -*-===//
//
// This file declares the ONNX importer (library TofuGraphONNX, built when
// Debian's libonnx-dev and libprotobuf-dev are found). It reads an ONNX
// model, folds its shape arithmetic under ONNX shape inference with data
// propagation, and lowers each node to the tofu
// operator types of the standard library (docs/GraphFormat.md, "ONNX
// import"): initializers become `param` tensors, the other graph inputs
// `input`, the graph outputs `output`, everything else `activation`; all
// ops lowered from one ONNX node share its name as their `group`. Nodes
// of unsupported types are all listed in one error, never dropped.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_ONNXIMPORTER_H
#define TOFU_GRAPH_ONNXIMPORTER_H

#include "tofu/Graph/Graph.h"

#include <memory>

namespace tofu {
class DiagnosticEngine;

namespace graph {

/// Imports the ONNX model at `path`. Errors (an unreadable or malformed
/// model, symbolic or unknown shapes, unsupported operators) are reported
/// through `diags`, naming the ONNX node; returns null after any. The
/// returned graph is linked and has no source locations.
std::unique_ptr<Graph> importONNXFile(StringRef path, DiagnosticEngine &diags);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_ONNXIMPORTER_H
