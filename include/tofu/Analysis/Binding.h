//===- Binding.h - An operator analysis bound to shapes and params -*- C++ -*-===//
//
// This file declares Binding: the concrete values an OperatorAnalysis is
// instantiated with (input shapes, params, and usually the output shape)
// and what follows from them once: the extent of every index variable and
// the value of every coefficient of the index programs. Creating a Binding
// checks the shapes against the operator (ranks, and that a reduction
// variable indexing several tensor dimensions by itself sees one extent,
// and that no index arithmetic can overflow int64_t at these extents);
// everything computed from a Binding afterwards is plain integer
// arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_BINDING_H
#define TOFU_ANALYSIS_BINDING_H

#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/Support/Shape.h"

#include "llvm/Support/Error.h"

namespace tofu {
namespace analysis {

/// Concrete shapes and params for one use of an operator. It refers to its
/// OperatorAnalysis, which must stay where it is while the Binding is used.
class Binding {
public:
  /// Binds input shapes (by tensor position) and params (by position). The
  /// output variables' extents stay unknown until setOutputShape.
  static llvm::Expected<Binding> create(const OperatorAnalysis &analysis,
                                        ArrayRef<Shape> inputShapes,
                                        ArrayRef<int64_t> params);
  /// As above, and binds the output shape too.
  static llvm::Expected<Binding> create(const OperatorAnalysis &analysis,
                                        ArrayRef<Shape> inputShapes,
                                        ArrayRef<int64_t> outputShape,
                                        ArrayRef<int64_t> params);

  /// Sets the output shape (and so the output variables' extents).
  llvm::Error setOutputShape(ArrayRef<int64_t> shape);
  bool hasOutputShape() const { return outputBound; }

  const OperatorAnalysis &getAnalysis() const { return *analysis; }
  ArrayRef<int64_t> getOutputShape() const { return outputShape; }
  ArrayRef<int64_t> getInputShape(unsigned tensor) const {
    return inputShapes[tensor];
  }
  ArrayRef<int64_t> getParams() const { return params; }
  /// The extent of index variable `var`.
  int64_t getVarExtent(unsigned var) const { return varExtents[var]; }
  ArrayRef<int64_t> getVarExtents() const { return varExtents; }
  /// The value of coefficient slot `slot`.
  int64_t getCoefficient(unsigned slot) const { return coefValues[slot]; }
  /// The value of an atom (for evaluating polynomials).
  int64_t getAtomValue(Atom atom) const;

private:
  explicit Binding(const OperatorAnalysis &analysis) : analysis(&analysis) {}
  /// create() without checkIndexArithmetic.
  static llvm::Expected<Binding> bind(const OperatorAnalysis &analysis,
                                      ArrayRef<Shape> inputShapes,
                                      ArrayRef<int64_t> params);
  llvm::Error bindInputs(ArrayRef<Shape> shapes, ArrayRef<int64_t> values);
  llvm::Error bindVarExtents();
  llvm::Error checkLoneVarExtents() const;
  /// Fails if interval evaluation of some index over the full extents of
  /// the variables goes beyond ±MaxIndexMagnitude (a huge coefficient times
  /// a large extent); every sub-box then stays within it too.
  llvm::Error checkIndexArithmetic() const;

  const OperatorAnalysis *analysis;
  SmallVector<Shape, 4> inputShapes;
  Shape outputShape;
  SmallVector<int64_t, 4> params;
  SmallVector<int64_t, 8> varExtents;
  SmallVector<int64_t, 16> coefValues;
  SmallVector<int64_t, 2> opaqueValues;
  bool outputBound = false;
};

/// Orders named param values (a graph's `"params": {"stride": 1}`) by the
/// operator's param positions, as Binding and inferOutputShape take them.
/// Fails on a missing or unknown name.
llvm::Expected<SmallVector<int64_t, 4>>
orderParams(const tdl::OpDecl &op,
            ArrayRef<std::pair<StringRef, int64_t>> namedValues);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_BINDING_H
