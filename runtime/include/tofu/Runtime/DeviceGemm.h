//===- DeviceGemm.h - A contraction as library GEMM calls -------*- C++ -*-===//
//
// This file declares how the device executor computes a kernel the
// generator marked as a contraction (lib/CodeGen/Contraction.cpp): the
// description the generator derives from its BLAS matcher (DeviceGemm),
// and the pure host function turning it and a KernelCall into row-major
// GEMM calls on the call's boxes (planGemm). Batch elements whose operands
// lie a constant number of elements apart form one strided batch. A body
// `scale * T[..] + alpha * Sum(..)` (addmm, baddbmm) fills the output box
// with scale * T first (GemmBias) and the GEMM adds alpha times the sum
// (beta = 1). The CUDA device issues each call as one cublasSgemm/
// cublasDgemm, or one cublas{S,D}gemmStridedBatched for a batch of
// several, each fill as one more cuBLAS call (a full bias: one per batch
// element; CudaDevice.cpp); the unit tests run the same calls with a loop
// on the host against the generated kernel. No CUDA here.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEGEMM_H
#define TOFU_RUNTIME_DEVICEGEMM_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tofu {
namespace runtime {

/// The `scale * T[..]` of a body `scale * T[..] + alpha * Sum(..)`: T is
/// input `input`, dimension d of which is read at output variable
/// `vars[d]`, or at index 0 where `vars[d]` is -1 (a broadcast dimension of
/// extent 1, as addmm's `self[0, j]` and baddbmm's `self[b % 1, ..]` read
/// it). The generator describes it only where a fill is one cuBLAS call
/// per batch element: T's last dimension is read at j, or j reads none of
/// T and i does.
struct GemmBias {
  unsigned input = 0;
  double scale = 1;
  std::vector<int> vars;
};

/// A kernel whose body is `out[b.., i, j] = Sum_k A[..] * B[..]` (or
/// `bias + alpha * Sum(..)`, below): the output variables are the batch
/// variables b.., then i, then j (KernelCall order 0 .. rank-1); k is
/// variable `kVar`, ranging over [0, kExtent). A is input `a`, B input
/// `b`; `aVars[d]` (`bVars[d]`) is the variable indexing dimension d of A
/// (B). A's last two dimensions are (i, k), or (k, i) when transA; B's
/// (k, j), or (j, k) when transB.
struct DeviceGemm {
  unsigned a = 0, b = 1;
  bool transA = false, transB = false;
  unsigned kVar = 2;
  std::int64_t kExtent = 0;
  std::vector<unsigned> aVars, bVars;
  /// The body is `bias + alpha * Sum(..)` (GemmBias; addmm's alpha, 1 for
  /// a plain contraction).
  double alpha = 1;
  std::optional<GemmBias> bias;
};

/// `batch` row-major GEMMs: for every e in [0, batch), C_e[m x n] =
/// op(A_e) op(B_e), op(A_e) of [m x k] and op(B_e) of [k x n], where op
/// transposes the stored matrix when `transA` (`transB`); A_e starts
/// e * strideA elements after `a` (likewise B_e, C_e); lda, ldb, ldc are
/// the stored row strides in elements. k = 0 means every C_e is
/// zero-filled. With `fill` (a GemmBias), every C_e is first set to
/// C_e[r, q] = fillScale * F_e[r * fillRow + q * fillCol], F_e starting e
/// * strideFill elements after `fill` (strides of 0 broadcast), and the
/// GEMM then adds alpha op(A_e) op(B_e) to it (nothing when k = 0).
struct GemmCall {
  std::int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  const void *a = nullptr, *b = nullptr;
  void *c = nullptr;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
  double alpha = 1;
  const void *fill = nullptr;
  std::int64_t fillRow = 0, fillCol = 0, strideFill = 0;
  double fillScale = 1;
};

/// The GEMMs computing `g` over `call`'s iteration box (none if the box is
/// empty), pointers into the call's boxes, the reduction clamped to [0,
/// kExtent) and the call's range of k: the box's batch elements in
/// row-major order, consecutive ones merged into one strided batch while
/// their operands stay the same distance apart (a box whose batch
/// dimensions are whole in every operand is one call); with a bias, its
/// fill in every call, the bias's batch stride also the same.
std::vector<GemmCall> planGemm(const DeviceGemm &g, const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEGEMM_H
