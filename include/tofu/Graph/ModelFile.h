//===- ModelFile.h - Read a graph from JSON or ONNX -------------*- C++ -*-===//
//
// This file declares readModelFile, the one way tools read the graph a
// user names: tofu-graph JSON, or an ONNX model (`.onnx`) imported when the
// importer is built and then written out as tofu-graph JSON and read back,
// so that diagnostics about it point at a line of that text.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_MODELFILE_H
#define TOFU_GRAPH_MODELFILE_H

#include "tofu/Graph/Graph.h"

#include <memory>

namespace tofu {
class DiagnosticEngine;

namespace graph {

/// True if ONNX models can be read (the importer was built).
bool canReadONNX();

/// Reads `path` (tofu-graph JSON, `-` for stdin, or `.onnx`). Null after
/// diagnostics.
std::unique_ptr<Graph> readModelFile(StringRef path, DiagnosticEngine &diags);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_MODELFILE_H
