//===- ShapeAgreement.h - Does an output shape fit an operator? -*- C++ -*-===//
//
// This file declares the one shape rule for an output shape given from
// outside an operator (a graph's tensor, tdlc's --out-shape): where shape
// inference determines the output, the given shape must equal it up to a
// stride's tolerance; where it does not determine every dimension, the
// given extents must bind with the inputs and keep the reads that bound
// each dimension in bounds. The graph verifier (tofu-graph), `tdlc
// --coverage` and `tdlc --out-shape` all judge through judgeOutputShape.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_SHAPEAGREEMENT_H
#define TOFU_ANALYSIS_SHAPEAGREEMENT_H

#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/Support/Shape.h"

#include <string>

namespace tofu {
namespace analysis {

/// How a given output shape relates to its operator.
struct ShapeVerdict {
  enum class Kind {
    /// Inference determines the shape, and it is the given one.
    Exact,
    /// Inference determines it, and the given one is within a stride of it
    /// in each dimension (docs/GraphFormat.md, "Output shapes"): with a
    /// stride s in a read that bounds a dimension, the s - 1 extents below
    /// the inferred one read the same elements except the last partial
    /// stride (PyTorch's floor in a strided convolution's weight gradient);
    /// with a divisor d (`/`, `%`, analysed conservatively) the d - 1
    /// extents above are accepted too. For an opaque body, whose reads
    /// bound what it may read and not what it computes, any extent up to
    /// the inferred one.
    Tolerated,
    /// The reads leave some extent open; the given extents bind and keep
    /// every read that one output variable alone bounds within its tensor
    /// dimension (with the symmetric zero padding inference allows).
    Undetermined,
    /// The given shape contradicts the operator.
    Mismatch,
    /// The inputs or the given shape do not fit the operator at all.
    Invalid,
  };
  Kind kind;
  /// Mismatch: what the operator gives instead ("the operator gives 4x3",
  /// or the read a dimension overruns); Invalid: the error message (it
  /// names the operator); Undetermined: why inference left a dimension
  /// open; Tolerated: the inferred shape.
  std::string detail;

  /// True for Exact, Tolerated and Undetermined.
  bool agrees() const {
    return kind == Kind::Exact || kind == Kind::Tolerated ||
           kind == Kind::Undetermined;
  }
};

/// Judges the output shape `given` of one use of `analysis`'s operator with
/// `inputShapes` and int param values `params` (declaration order). `opaque`
/// says the operator's body is `opaque(...)`.
ShapeVerdict judgeOutputShape(const OperatorAnalysis &analysis,
                              ArrayRef<Shape> inputShapes,
                              ArrayRef<int64_t> params,
                              ArrayRef<int64_t> given, bool opaque);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_SHAPEAGREEMENT_H
