//===- GraphWriter.h - Write the Graph IR as tofu-graph JSON ----*- C++ -*-===//
//
// This file declares the tofu-graph writer. The output is stable and
// line-oriented, the layout tofu-export writes: the header fields on the
// first line, then one tensor and one op per line, known fields first in a
// fixed order, then the node's other fields in the order they were read.
// Reals are spelled as the shortest text that reads back to the same
// double (as Python's repr does), so reading the output gives the same
// graph and writing it again gives the same bytes.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_GRAPHWRITER_H
#define TOFU_GRAPH_GRAPHWRITER_H

#include "tofu/Graph/Graph.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tofu {
namespace graph {

/// Writes `g` as a tofu-graph JSON document.
void writeGraph(llvm::raw_ostream &os, const Graph &g);

/// Writes `value` as a JSON number or, for infinities and NaN, as the
/// strings "inf", "-inf", "nan" (the format's spelling).
void writeParamValue(llvm::raw_ostream &os, const ParamValue &value);

/// The shortest decimal spelling of a finite double that reads back to it,
/// laid out as Python's repr: `0.1`, `1.0`, `1e-05`, `1e+16`.
std::string formatReal(double value);

/// Writes `s` as a JSON string literal.
void writeJSONString(llvm::raw_ostream &os, StringRef s);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_GRAPHWRITER_H
