//===- Evaluator.h - Execute TDL operators on concrete tensors --*- C++ -*-===//
//
// This file declares the TDL evaluator: it runs one concrete, Sema-checked
// operator (named index variables only; generic operators are instantiated
// first, see docs/Evaluator.md) on concrete input tensors, with a value per
// param and an output shape, and produces the output tensor. Semantics:
// reads outside a tensor are 0; reducers Sum/Max/Min/Prod start from
// 0/-inf/+inf/1, so an empty range gives that identity; integer `/` floors
// and `%` takes the divisor's sign; comparisons and `&& || !` give 0 or 1; a
// real value used as an index (a data-dependent read) is truncated toward
// zero. Everything is computed in double.
//
// Compilation and execution are separate so that a caller running an
// operator many times (the runtime's CPU backend) compiles it once: the
// expression tree becomes a flat postfix program per lambda body whose
// index variables, params, tensor strides and extents are resolved to
// slots and constants; execution allocates nothing per element.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_EVAL_EVALUATOR_H
#define TOFU_EVAL_EVALUATOR_H

#include "tofu/Eval/Tensor.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace tofu {
namespace tdl {
class OpDecl;
} // namespace tdl

namespace eval {

struct Program;

/// An input of CompiledOp::runBox: the values (as doubles) of the dense
/// row-major box of a tensor whose first element is at global coordinates
/// `lo`, with `extent` elements per dimension.
struct BoxArg {
  const double *data;
  ArrayRef<int64_t> lo;
  ArrayRef<int64_t> extent;
};

/// The output of CompiledOp::runBox, a dense box like BoxArg.
struct BoxOut {
  double *data;
  ArrayRef<int64_t> lo;
  ArrayRef<int64_t> extent;
};

/// An operator compiled for fixed param values and input and output shapes.
class CompiledOp {
public:
  /// Compiles `op` for inputs of `inputShapes` (by tensor position),
  /// `params` (by param position; an int param's value must be integral)
  /// and an output of `outputShape`. Fails with a message naming the
  /// operator if the shapes or params do not fit it or it cannot be
  /// evaluated (an opaque body).
  static llvm::Expected<CompiledOp> compile(const tdl::OpDecl &op,
                                            ArrayRef<Shape> inputShapes,
                                            ArrayRef<double> params,
                                            ArrayRef<int64_t> outputShape);

  CompiledOp(CompiledOp &&);
  CompiledOp &operator=(CompiledOp &&);
  ~CompiledOp();

  /// Computes every element of `output` from `inputs`, which must have the
  /// compiled shapes (checked by assertions only).
  void run(ArrayRef<const Tensor *> inputs, Tensor &output) const;

  /// Computes the output elements of one iteration box, as a worker
  /// running a share of the operator does (runtime/Kernel.h): `varLo` and
  /// `varHi` give a range per index variable (by id: output variables, then
  /// reduction variables in source order). Each output element in the box
  /// of the output variables is written once; a reduction ranges over the
  /// intersection of its variables' ranges with the box (partial values for
  /// a share of a reduction); a read outside the whole tensor gives 0, a
  /// read inside it must fall in the input's box.
  void runBox(ArrayRef<BoxArg> inputs, const BoxOut &output,
              ArrayRef<int64_t> varLo, ArrayRef<int64_t> varHi) const;

  /// Number of index variables (the length of runBox's ranges).
  unsigned getNumVars() const;

  /// The value type of the body: int and bool bodies give integral values.
  bool hasRealBody() const;

private:
  explicit CompiledOp(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program;
};

/// Compiles and runs `op` once; the output gets dtype `outputType`.
llvm::Expected<Tensor> evaluate(const tdl::OpDecl &op,
                                ArrayRef<const Tensor *> inputs,
                                ArrayRef<double> params,
                                ArrayRef<int64_t> outputShape,
                                DType outputType);

} // namespace eval
} // namespace tofu

#endif // TOFU_EVAL_EVALUATOR_H
