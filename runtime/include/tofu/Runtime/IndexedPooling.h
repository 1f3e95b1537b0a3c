//===- IndexedPooling.h - Max pooling's indices and gradient as loops -*- C++ -*-===//
//
// This file declares the CPU runtime's own loops for the two ops of a 2-D
// max pooling that no library computes from ATen's indices:
// max_pool2d_with_indices__1 (the flat position of each window's maximum)
// and max_pool2d_with_indices_backward (each window's gradient added at the
// position its index names), as specs/pool.tdl defines them. The generated
// kernels evaluate those definitions literally: the indices compare every
// window position with the window's maximum, the gradient visits every
// window position of every input element with a division and a remainder
// per visit. These loops enumerate only the windows that can hold an input
// element and give the generated kernels' values bit for bit (sums in
// double in the definition's order, NaN windows indexed H*W). They cover
// NCHW f32 data with i64 indices and any box of the output variables whose
// window variables are whole; any other call is declined, and the caller
// runs the generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_INDEXEDPOOLING_H
#define TOFU_RUNTIME_INDEXEDPOOLING_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {

/// Which of the two ops.
enum class IndexedPoolingKind : std::uint8_t {
  /// max_pool2d_with_indices__1(self): i64 output of the pooled shape.
  Indices,
  /// max_pool2d_with_indices_backward(grad_output, self, indices): f32
  /// output of self's shape.
  Backward,
};

/// One op instance: its params and shapes (rank 4, NCHW), and for each
/// window variable of its kernel (the KernelCall variables after the four
/// output variables) the window axis it ranges over (0: rows, 1: columns).
struct IndexedPooling {
  IndexedPoolingKind kind = IndexedPoolingKind::Indices;
  std::int64_t window[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0},
               dilation[2] = {1, 1};
  /// self's shape and the pooled shape (indices, grad_output).
  std::int64_t inputShape[4] = {}, pooledShape[4] = {};
  std::vector<std::uint8_t> windowAxes;
};

/// Computes `call` of `p`'s kernel and returns true, or returns false
/// without writing anything when the call is not covered: an element type
/// other than f32 data and i64 indices, or a window variable whose range is
/// not the whole window.
bool runIndexedPooling(const IndexedPooling &p, const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_INDEXEDPOOLING_H
