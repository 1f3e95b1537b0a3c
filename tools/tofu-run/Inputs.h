//===- Inputs.h - Values of a graph's inputs for tofu-run -------*- C++ -*-===//
//
// This file declares how tofu-run obtains graph inputs: read from .npy
// files (checked against the tensor's shape and dtype), the values a
// constant carries in the graph, or drawn from a seeded generator: floats uniform in [-0.1, 0.1) ([0, 0.1) for optimizer
// state such as Adam's second moments), integers uniform in
// [0, n) with n the smallest extent of any floating-point tensor read by an
// op that consumes the integer tensor, directly or through ops with integer
// outputs (so labels and token ids index every dimension they may meet).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_INPUTS_H
#define TOFU_TOOLS_TOFU_RUN_INPUTS_H

#include "tofu/Graph/Graph.h"
#include "tofu/Runtime/Executor.h"

#include "llvm/Support/Error.h"

#include <random>

namespace tofu {

/// Reads `path` as the value of tensor `t` of `g`; errors name the file and
/// what does not match.
llvm::Expected<runtime::HostTensor> readInputFile(const graph::Graph &g,
                                                  unsigned t, StringRef path);

/// The value a graph input of `g` carries in its `"value"` field (a
/// constant of the model, docs/Export.md: flattened, row-major), None
/// without one; errors name the tensor.
llvm::Expected<llvm::Optional<runtime::HostTensor>>
readValueField(const graph::Graph &g, unsigned t);

/// Draws a value of tensor `t` of `g` from `rng`.
runtime::HostTensor makeRandomInput(const graph::Graph &g, unsigned t,
                                    std::mt19937_64 &rng);

/// The elements of `value` as doubles.
std::vector<double> toDoubles(const runtime::HostTensor &value);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_INPUTS_H
