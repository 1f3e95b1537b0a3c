//===- Kernel.h - The calling convention of op kernels -----------*- C++ -*-===//
//
// This file declares the ABI between the runtime's schedule and the kernels
// that compute one op instance on one worker. It is the contract between the
// kernel generator (lib/CodeGen, `tdlc --emit=cpp-kernel`, later CUDA) and
// the runtime (runtime/), and it must stay free of LLVM and ANTLR: generated
// kernels compile against this header and the C++ standard library alone.
//
// A kernel is generated for one op *instance*: an instantiated TDL operator
// with its params, input and output shapes and dtypes fixed, so ranks,
// strides of the whole tensors, params and the reducer are settled at
// generation time. What varies from call to call is the *iteration box*:
// the range of every index variable this worker computes (its share of the
// output variables after `split` steps, and of the reduction variables after
// `reduce` steps), and where the boxes of its inputs and output lie.
//
// Semantics of one call (those of the TDL evaluator, the reference):
//  - Every output element inside the box of the output variables is written
//    exactly once; nothing outside it is touched.
//  - A reduction `R(lambda v: e)` ranges over the intersection of v's own
//    range and [varLo, varHi) of v; it starts from R's identity (Sum 0,
//    Prod 1, Max -inf, Min +inf), so a worker holding a `reduce` share
//    computes a partial value that the runtime combines across workers
//    with the same reducer.
//  - A read of an input outside the whole tensor (padding) gives 0. A read
//    inside the tensor must fall inside the input's box: the runtime
//    fetches the bounding box the analysis computed, so anything else is a
//    runtime bug (checked by assertions in debug builds only).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_KERNEL_H
#define TOFU_RUNTIME_KERNEL_H

#include <cstdint>

namespace tofu {
namespace runtime {

/// The element types the runtime stores, by their tofu-graph dtype names.
/// F16 and BF16 are 16-bit patterns (tofu/Runtime/Half.h), computed on in
/// float or double and rounded when stored.
enum class ElementType : std::uint8_t { F32, F64, I64, I32, I8, Bool, F16, BF16 };

/// A dense, row-major box of a tensor in one worker's memory.
struct BoxView {
  ElementType type;
  unsigned rank;
  /// The first element; the box is contiguous, innermost dimension last.
  void *data;
  /// The global coordinates of the box's first element, per dimension.
  const std::int64_t *lo;
  /// The box's extent per dimension (its strides follow from these).
  const std::int64_t *extent;
};

/// The arguments of one kernel call.
struct KernelCall {
  /// The input boxes in the order of the op's tensor parameters.
  const BoxView *inputs;
  unsigned numInputs;
  /// The output box: it contains the box of the output variables.
  BoxView output;
  /// The iteration box: a half-open range per index variable, output
  /// variables first (in the order of the op's lambda, which is the order of
  /// the output dimensions), then reduction variables in the order the
  /// kernel's KernelInfo::varNames lists them (source order).
  const std::int64_t *varLo;
  const std::int64_t *varHi;
};

/// A kernel: computes the output over the iteration box of `call`.
using KernelFn = void (*)(const KernelCall &call);

/// A generated kernel with what the runtime needs to call it.
struct KernelInfo {
  /// A unique symbol-like name of the op instance's kernel.
  const char *name;
  KernelFn fn;
  /// Index variables in KernelCall order, and how many there are.
  const char *const *varNames;
  unsigned numVars;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_KERNEL_H
