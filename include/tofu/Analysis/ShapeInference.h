//===- ShapeInference.h - Output shapes from input shapes -------*- C++ -*-===//
//
// This file declares output shape inference: the largest output whose reads
// stay in bounds. Each output dimension is bounded by the reads whose index
// depends on that output variable and on no other output variable; the
// extent is the largest X such that, with the variable over [0, X) and the
// reduction variables over their extents, each such index stays within its
// tensor dimension. Zero padding is taken to be symmetric: an index that
// already reads `p` elements below 0 at the variable's first value (a
// padded convolution's `y * stride + ky - pad`) may also read `p` elements
// past the end, which gives the usual (H + 2 pad - K) / stride + 1. An
// output dimension that no such read bounds is not determined, and the
// error says which.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_SHAPEINFERENCE_H
#define TOFU_ANALYSIS_SHAPEINFERENCE_H

#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/Support/Shape.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tofu {
namespace analysis {

/// The error of inferOutputShape when the reads bound no extent of some
/// output dimension: a caller that knows the shape from elsewhere (a graph)
/// can still use it. Its message names the operator and the dimension.
class UndeterminedShapeError
    : public llvm::ErrorInfo<UndeterminedShapeError> {
public:
  static char ID;
  explicit UndeterminedShapeError(std::string message)
      : text(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string text;
};

/// Infers the output shape of an analysed operator from its input shapes
/// (by tensor position) and params (by position). Fails with a message
/// naming the operator when the shapes do not fit the operator, or with an
/// UndeterminedShapeError when the reads do not determine an output
/// dimension.
llvm::Expected<Shape> inferOutputShape(const OperatorAnalysis &analysis,
                                       ArrayRef<Shape> inputShapes,
                                       ArrayRef<int64_t> params);

/// As above, analysing `op` first (for one-off callers such as a graph
/// validator; the planner keeps its OperatorAnalysis).
llvm::Expected<Shape> inferOutputShape(const tdl::OpDecl &op,
                                       ArrayRef<Shape> inputShapes,
                                       ArrayRef<int64_t> params);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_SHAPEINFERENCE_H
