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

/// How far a declared output extent may differ from the inferred one.
struct ExtentTolerance {
  /// The declared extent may be this much smaller (exclusive)...
  int64_t below = 1;
  /// ...or this much larger (exclusive).
  int64_t above = 1;
};

/// The tolerance of output variable `var`, from the reads that `var` alone
/// bounds. Inference gives the largest extent whose reads stay in bounds
/// (with symmetric padding). With a stride s in such a read (the largest
/// absolute coefficient of another index variable, or a divisor), the s - 1
/// extents below it read the same elements except the last partial stride
/// (PyTorch's floor in a strided convolution's weight gradient,
/// output_padding in its input gradient): `below` is s. Reads through
/// `/` or `%` are analysed conservatively, so with a divisor d the d - 1
/// extents above are accepted too (a strided pooling backward whose reads
/// hull the window): `above` is d. Affine reads without division are
/// exact above: `above` is 1.
ExtentTolerance getExtentTolerance(const analysis::Binding &binding,
                                   unsigned var);

/// Checks each output dimension of `binding` (which has the declared output
/// shape) against the reads that bound it alone. Returns an empty string if
/// every dimension fits, else a message naming the first dimension and the
/// read it overruns.
std::string checkOutputExtents(const analysis::Binding &binding);

/// The shape rule where inference determines the whole output: true if
/// `declared` equals `inferred`, or differs from it in each dimension by
/// less than that dimension's ExtentTolerance; for an opaque body (whose
/// reads bound what it may read, not what it computes) any extent up to the
/// inferred one agrees too.
bool declaredShapeAgrees(const analysis::OperatorAnalysis &analysis,
                         ArrayRef<Shape> inputShapes, ArrayRef<int64_t> params,
                         ArrayRef<int64_t> inferred,
                         ArrayRef<int64_t> declared, bool opaque);

/// How a declared output shape (a graph's) relates to its operator.
struct ShapeVerdict {
  enum class Kind {
    /// Inference determines the shape, and it is the declared one.
    Exact,
    /// Inference determines it, and the declared one is within the
    /// tolerance of declaredShapeAgrees.
    Tolerated,
    /// The reads leave some extent open; the declared extents bind and
    /// keep the reads in bounds (checkOutputExtents).
    Undetermined,
    /// The declared shape contradicts the operator.
    Mismatch,
    /// The inputs or the declared shape do not fit the operator at all.
    Invalid,
  };
  Kind kind;
  /// Mismatch: what the operator gives instead ("the operator gives 4x3",
  /// or the read a dimension overruns); Invalid: the error message (it
  /// names the operator); Tolerated: the inferred shape.
  std::string detail;
};

/// The shape rule of the graph verifier (docs/GraphFormat.md): judges the
/// declared output shape of one use of `analysis`'s operator.
ShapeVerdict judgeOutputShape(const analysis::OperatorAnalysis &analysis,
                              ArrayRef<Shape> inputShapes,
                              ArrayRef<int64_t> params,
                              ArrayRef<int64_t> declared, bool opaque);

} // namespace graph
} // namespace tofu

#endif // TOFU_GRAPH_SHAPEAGREEMENT_H
