//===- KernelEmitter.h - C++ kernels from TDL operator instances -*- C++ -*-===//
//
// This file declares the kernel generator: for one op instance (a concrete,
// Sema-checked operator with its params, input and output shapes and element
// types fixed) it emits the source of one function in the runtime's kernel
// ABI (runtime/include/tofu/Runtime/Kernel.h) that computes the output over
// a call's iteration box with the TDL evaluator's semantics: a loop nest
// over the output variables, reductions inline over the intersection of
// their range with the box, reads as offsets into the input boxes, zero
// padding checked only where an index can leave its tensor. A contraction
// (`Sum(lambda k: A[.., i, k] * B[.., k, j])`, as in mm, bmm, addmm) is
// handed to BLAS (cblas_sgemm/dgemm) on the box. See docs/CodeGen.md.
//
// What the lowering computes is target-neutral (loops, index arithmetic and
// bounds settled here, the evaluator's helpers in one prelude): the CUDA
// target (KernelTarget::Cuda, docs/CUDA.md) replaces the function header
// and the output loops by one thread per output element and reuses it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CODEGEN_KERNELEMITTER_H
#define TOFU_CODEGEN_KERNELEMITTER_H

#include "tofu/Support/DType.h"
#include "tofu/Support/LLVM.h"
#include "tofu/Support/Shape.h"
#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Runtime/DeviceGemm.h"
#include "tofu/Runtime/DevicePooling.h"

#include "llvm/ADT/Optional.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tofu {
namespace tdl {
class OpDecl;
class Expr;
} // namespace tdl

namespace codegen {

/// One op instance to generate a kernel for.
struct KernelInstance {
  /// The concrete operator (instantiated and checked).
  const tdl::OpDecl *op = nullptr;
  /// Param values by position (int params integral).
  SmallVector<double, 4> params;
  /// Input shapes and element types by tensor position.
  SmallVector<Shape, 4> inputShapes;
  SmallVector<DType, 4> inputTypes;
  Shape outputShape;
  DType outputType = DType::F32;
};

/// The code a kernel is generated as.
enum class KernelTarget {
  /// A C++ function in the KernelCall ABI (loop nest, BLAS).
  Cpp,
  /// A CUDA kernel (CudaEmitter.cpp, docs/CUDA.md): a device body of one
  /// thread per output element, its __global__ wrapper and launch function
  /// under __CUDACC__, and a host function in the KernelCall ABI that runs
  /// the body over the emulated grid. Contractions stay on the loop nest.
  Cuda,
};

/// What to generate.
struct KernelOptions {
  /// Route contractions to BLAS; false keeps them on the loop nest.
  bool useBlas = true;
  KernelTarget target = KernelTarget::Cpp;
};

/// How a C++ kernel computes its op, which decides its speed (the step-time
/// estimate's kinds of op, docs/StepTime.md).
enum class KernelKind {
  /// A contraction by BLAS (one GEMM per batch element of the box).
  Gemm,
  /// A convolution or one of its gradients through im2col and BLAS.
  Convolution,
  /// A 2-D transpose through OpenBLAS's transposed copy.
  Transpose,
  /// A loop nest without reductions.
  Elementwise,
  /// A loop nest with reductions.
  Reduction,
};

/// "gemm", "convolution", "transpose", "elementwise", "reduction".
const char *getKernelKindName(KernelKind kind);

/// A generated kernel.
struct GeneratedKernel {
  /// The function's name.
  std::string name;
  /// The function definition (it needs getKernelPrelude() before it).
  std::string source;
  /// The index variables in KernelCall order (by IndexVarDecl id).
  std::vector<std::string> varNames;
  /// The full range of each variable: [0, extent).
  std::vector<int64_t> varExtents;
  /// True if a contraction was routed to BLAS.
  bool usesBlas = false;
  /// How the C++ kernel computes (the CUDA target: its host function).
  KernelKind kind = KernelKind::Elementwise;
  /// Per input position: the body reads that input only at the output
  /// element's own index (`x[i, j]` over the output `(i, j)`, no padding,
  /// the input's shape the output's), so any sub-box of the output
  /// variables reads the same sub-box of it (the runtime's fusion of
  /// element-wise chains, docs/CodeGen.md "Fusion").
  std::vector<bool> pointwiseInputs;
  /// CUDA target: the body has a contraction (the count tdlc and
  /// kernel-check print as "cuBLAS on the device"); only one described in
  /// `gemm` is handed to cuBLAS, the generated kernel being its fallback.
  bool deviceGemm = false;
  /// Both targets: the whole body is a contraction (mm, bmm), or a
  /// contraction plus a bias (addmm, baddbmm: DeviceGemm::bias),
  /// described for the device executor's library GEMMs (DeviceGemm.h).
  llvm::Optional<runtime::DeviceGemm> gemm;
  /// Both targets: the body is a forward 2-D convolution (the C++ target's
  /// im2col routing) with affine input indices, described for cuDNN
  /// (DeviceConv.h).
  llvm::Optional<runtime::DeviceConv> conv;
  /// Both targets: the body is a training-mode batch normalization's
  /// output (native_batch_norm__0's form, lib/CodeGen/BatchNorm.cpp),
  /// described for cuDNN (DeviceBatchNorm.h).
  llvm::Optional<runtime::DeviceBatchNorm> batchNorm;
  /// Both targets: the body is a forward 2-D max or average pooling
  /// (lib/CodeGen/Pooling.cpp), described for cuDNN (DevicePooling.h).
  llvm::Optional<runtime::DevicePooling> pooling;
};

/// Emits the kernel of `instance` named `name` (a C identifier). Fails with
/// a message naming the operator for what cannot be generated: an opaque
/// body, f16/bf16 tensors, shapes that do not fit.
llvm::Expected<GeneratedKernel> emitKernel(const KernelInstance &instance,
                                           StringRef name,
                                           const KernelOptions &options = {});

/// Emits `bool name(const tofu::runtime::KernelCall &call)`, one C++ kernel
/// for the fused chain a1 -> a2 -> ... -> an of `chain` (n >= 2,
/// docs/CodeGen.md "Fusion"): op k's inputs at the positions
/// `slotsOfPrevious[k]` (k >= 1) are op k - 1's output, read at op k's own
/// element index, and each op but the last computes its values in the same
/// kernel, block by block (a stack block per intermediate), converted to its
/// output's element type as its kernel stores it, so the results are bit for
/// bit those of the n kernels. The
/// call's inputs are the ops' in order (the views at the `slotsOfPrevious`
/// positions are not read), its output and box an's. It returns false,
/// writing nothing, where the box is not one dense run of every box it
/// reads and writes (the caller then runs the kernels). Fails, naming the
/// operators, unless every body takes the dense-run branch (DenseRun.cpp)
/// and each intermediate is read only at the element's own index.
llvm::Expected<std::string>
emitFusedKernel(ArrayRef<KernelInstance> chain,
                ArrayRef<std::vector<unsigned>> slotsOfPrevious,
                StringRef name);

/// Emits `bool name(const tofu::runtime::KernelCall &call)`, one C++ kernel
/// for the chain a -> b1 -> ... -> bn of `chain` (n >= 1, docs/CodeGen.md
/// "Fusion") where a is a contraction BLAS computes whole (mm, bmm) and
/// each bk is element-wise and affine in the previous op's value, read at
/// its own index (positions `slotsOfPrevious[k]`): X + c * t with c a
/// constant (getAffineCoefficient). The kernel stores the epilogue's value
/// with the sum taken as 0 into bn's output box, then one GEMM (beta = 1)
/// adds alpha, the product of the c, times the sum to it: the output
/// differs from the unfused ops' by float rounding (the sum is added
/// inside BLAS, never rounded on its own). The call's inputs are the ops'
/// in order, its output and box bn's; a's reduction runs over its whole
/// range. It always returns true. Fails, naming the operators, where the
/// chain is not of that form.
llvm::Expected<std::string>
emitEpilogueKernel(ArrayRef<KernelInstance> chain,
                   ArrayRef<std::vector<unsigned>> slotsOfPrevious,
                   StringRef name);

/// The c of an element-wise body that is X + c * t, where t is its reads
/// of the inputs at `slots`, X reads none of them, and c is a finite
/// nonzero constant of literals and `params` (a normalisation of `t - c *
/// x`, `t * c`, `c * (t * d)`, `-t`, `t / c`, ...); None for any other
/// body (`x * t`, `t * t`, `max(0, t)`, no read of t).
llvm::Optional<double> getAffineCoefficient(const tdl::Expr &body,
                                            ArrayRef<unsigned> slots,
                                            ArrayRef<double> params);

/// The includes and helper functions every generated translation unit
/// starts with (the evaluator's integer division, NaN-propagating max, ...).
std::string getKernelPrelude();

/// The prelude of a CUDA translation unit: tofu/Runtime/DeviceKernel.h,
/// then getKernelPrelude() with its helpers __host__ __device__.
std::string getCudaKernelPrelude();

/// A C identifier made of `text`'s letters, digits and underscores.
std::string sanitizeIdentifier(StringRef text);

} // namespace codegen
} // namespace tofu

#endif // TOFU_CODEGEN_KERNELEMITTER_H
