//===- DeviceGemm.h - A contraction as library GEMM calls -------*- C++ -*-===//
//
// This file declares how the device executor computes a kernel the
// generator marked as a contraction (lib/CodeGen/Contraction.cpp): the
// description the generator derives from its BLAS matcher (DeviceGemm),
// and the pure host function turning it and a KernelCall into row-major
// GEMM calls on the call's boxes (planGemm). Batch elements whose operands
// lie a constant number of elements apart form one strided batch. The CUDA
// device issues each call as one cublasSgemm/cublasDgemm, or one
// cublas{S,D}gemmStridedBatched for a batch of several; the unit tests run
// the same calls with a loop on the host against the generated kernel. No
// CUDA here.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEGEMM_H
#define TOFU_RUNTIME_DEVICEGEMM_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {

/// A kernel whose whole body is `out[b.., i, j] = Sum_k A[..] * B[..]`:
/// the output variables are the batch variables b.., then i, then j
/// (KernelCall order 0 .. rank-1); k is variable `kVar`, ranging over
/// [0, kExtent). A is input `a`, B input `b`; `aVars[d]` (`bVars[d]`) is
/// the variable indexing dimension d of A (B). A's last two dimensions are
/// (i, k), or (k, i) when transA; B's (k, j), or (j, k) when transB.
struct DeviceGemm {
  unsigned a = 0, b = 1;
  bool transA = false, transB = false;
  unsigned kVar = 2;
  std::int64_t kExtent = 0;
  std::vector<unsigned> aVars, bVars;
};

/// `batch` row-major GEMMs: for every e in [0, batch), C_e[m x n] =
/// op(A_e) op(B_e), op(A_e) of [m x k] and op(B_e) of [k x n], where op
/// transposes the stored matrix when `transA` (`transB`); A_e starts
/// e * strideA elements after `a` (likewise B_e, C_e); lda, ldb, ldc are
/// the stored row strides in elements. k = 0 means every C_e is
/// zero-filled.
struct GemmCall {
  std::int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  const void *a = nullptr, *b = nullptr;
  void *c = nullptr;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
};

/// The GEMMs computing `g` over `call`'s iteration box (none if the box is
/// empty), pointers into the call's boxes, the reduction clamped to [0,
/// kExtent) and the call's range of k: the box's batch elements in
/// row-major order, consecutive ones merged into one strided batch while
/// their operands stay the same distance apart (a box whose batch
/// dimensions are whole in every operand is one call).
std::vector<GemmCall> planGemm(const DeviceGemm &g, const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEGEMM_H
