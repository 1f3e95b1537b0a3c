//===- GraphReader.h - Read tofu-graph JSON into the Graph IR ---*- C++ -*-===//
//
// This file declares the tofu-graph reader: JSON text -> Graph. It checks
// the document's schema (required fields and their JSON types, format and
// version, dtype spellings, integer dimensions, numeric params) and reports
// every problem at its exact line:column through the DiagnosticEngine.
// Fields the format does not define are kept verbatim on the node they
// belong to. Semantic checks (names, dataflow, specs) are the Verifier's.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_GRAPHREADER_H
#define TOFU_GRAPH_GRAPHREADER_H

#include "tofu/Graph/Graph.h"

#include <memory>

namespace tofu {
class DiagnosticEngine;

namespace graph {

/// Reads the tofu-graph in buffer `bufferId` of `diags.getSourceMgr()`.
/// Returns null if any error was reported (the reader reports as many as
/// it can find first). The returned graph is linked (Graph::link) and its
/// SMLocs point into the buffer, which the SourceMgr keeps alive.
std::unique_ptr<Graph> readGraph(unsigned bufferId, DiagnosticEngine &diags);

/// Reads the file at `path` ("-" for standard input) into the SourceMgr and
/// parses it as readGraph does. A file that cannot be read is an error.
std::unique_ptr<Graph> readGraphFile(StringRef path, DiagnosticEngine &diags);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_GRAPHREADER_H
