//===- ShapeAgreement.h - Does a declared output shape fit an operator? -*- C++ -*-===//
//
// This file declares the shape rule of the graph verifier for output
// dimensions that shape inference cannot determine as a whole: a declared
// extent fits an output variable if every read that the variable alone
// bounds (the reads analysis::inferOutputShape uses) stays within its
// tensor dimension, allowing the symmetric zero padding inference allows.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_GRAPH_SHAPEAGREEMENT_H
#define TOFU_GRAPH_SHAPEAGREEMENT_H

#include "tofu/Analysis/Binding.h"

#include <string>

namespace tofu {
namespace graph {

/// Checks each output dimension of `binding` (which has the declared output
/// shape) against the reads that bound it alone. Returns an empty string if
/// every dimension fits, else a message naming the first dimension and the
/// read it overruns.
std::string checkOutputExtents(const analysis::Binding &binding);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_SHAPEAGREEMENT_H
