//===- ShapeAgreement.h - Does a declared output shape fit an operator? -*- C++ -*-===//
//
// This file declares the shape rule of the graph verifier for output
// dimensions that shape inference cannot determine as a whole: a declared
// extent fits an output variable if every read that the variable alone
// bounds (the reads analysis::inferOutputShape uses) stays within its
// tensor dimension, allowing the symmetric zero padding inference allows;
// and the stride that lets a declared extent be a little smaller than the
// inferred one.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_SHAPEAGREEMENT_H
#define TOFU_GRAPH_SHAPEAGREEMENT_H

#include "tofu/Analysis/Binding.h"

#include <string>

namespace tofu {
namespace graph {

/// The stride of output variable `var`'s bounding reads: the largest
/// absolute coefficient of another index variable, or divisor, in an index
/// that `var` alone bounds (1 if none). Inference gives the largest extent
/// whose reads stay in bounds, assuming symmetric padding; with stride s,
/// the s - 1 extents on either side of it differ only in the last partial
/// stride (PyTorch's floor in a strided convolution's weight gradient,
/// output_padding in its input gradient, a pooling backward whose reads
/// hull the window), so the verifier accepts them.
int64_t getOutputStride(const analysis::Binding &binding, unsigned var);

/// Checks each output dimension of `binding` (which has the declared output
/// shape) against the reads that bound it alone. Returns an empty string if
/// every dimension fits, else a message naming the first dimension and the
/// read it overruns.
std::string checkOutputExtents(const analysis::Binding &binding);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_SHAPEAGREEMENT_H
