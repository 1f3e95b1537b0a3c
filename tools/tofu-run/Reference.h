//===- Reference.h - Saved values of an unpartitioned run -------*- C++ -*-===//
//
// This file declares tofu-run's reference files (--save-reference,
// --reference): the values of every tensor --check compares (graph outputs
// and updated parameters) after the unpartitioned run, so that plans of the
// same graph for several K are checked against one such run. A file is
// "tofu-run reference 1", a line naming what the values depend on (seed,
// steps, --input files), then per tensor its name, element type, byte
// count and raw bytes.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_REFERENCE_H
#define TOFU_TOOLS_TOFU_RUN_REFERENCE_H

#include "tofu/Graph/Graph.h"
#include "tofu/Runtime/Executor.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/Error.h"

namespace tofu {

/// The compared values of an unpartitioned run.
struct Reference {
  /// What the values depend on besides the graph (one line).
  std::string key;
  /// Per graph tensor: its value, or none for a tensor not compared.
  std::vector<llvm::Optional<runtime::HostTensor>> values;
};

/// Writes `ref` of graph `g` to `path`.
llvm::Error writeReference(StringRef path, const graph::Graph &g,
                           const Reference &ref);

/// Reads a reference of graph `g` from `path`; fails if it is malformed or
/// names tensors or sizes `g` does not have.
llvm::Expected<Reference> readReference(StringRef path, const graph::Graph &g);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_REFERENCE_H
