//===- KernelBuilder.h - The kernel generator's state -----------*- C++ -*-===//
//
// This file declares KernelBuilder, private to TofuCodeGen: it lowers one op
// instance to the text of a kernel. Expressions become C++ expressions over
// doubles (ExprLowering.cpp); the statements they need (a reduction's loop,
// an index checked against its tensor) go to a stack of scopes, one per
// output loop level, reduction loop and select branch, and a reduction is
// hoisted to the outermost output level where its free variables are bound
// (a normalization's mean is computed once per channel). Contraction.cpp
// matches a BLAS-shaped sum, Convolution.cpp a convolution computed by
// im2col and GEMM, BatchNorm.cpp and Pooling.cpp a batch normalization
// and a pooling for cuDNN;
// KernelEmitter.cpp assembles the function.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_CODEGEN_KERNELBUILDER_H
#define TOFU_LIB_CODEGEN_KERNELBUILDER_H

#include "tofu/CodeGen/KernelEmitter.h"
#include "tofu/TDL/AST.h"
#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Runtime/DeviceGemm.h"
#include "tofu/Runtime/DevicePooling.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Optional.h"

#include <string>
#include <vector>

namespace tofu {
namespace codegen {

/// A closed interval of integers.
struct Interval {
  int64_t lo, hi;
};

/// A contraction routed to BLAS: `Sum(lambda k: A[..] * B[..])` whose
/// result, one value per output element, is computed by a (batched) GEMM
/// into the output box before the loop nest.
struct Contraction {
  const tdl::ReduceExpr *reduce = nullptr;
  /// The tensor positions of the left (rows) and right (columns) operands.
  const tdl::TensorReadExpr *a = nullptr, *b = nullptr;
  unsigned kVar = 0;
  /// True if the operand is stored transposed (its last index is not k for
  /// A, not the column variable for B).
  bool transA = false, transB = false;
  /// True if the whole body is the contraction (no loop nest after it).
  bool wholeBody = false;
  /// An operand or the output is f16/bf16 (Contraction.cpp): the operands
  /// are widened to double copies, cblas_dgemm sums into a double buffer
  /// over the box (`gsum`), and each sum is rounded once where it is
  /// stored, as the loop nest computes it.
  bool widened = false;
  /// The body is `X + alpha * Sum(..)` (either order; alpha constant, 1 if
  /// absent; X without a reduction, like addmm's `beta * self[j]`): the
  /// loop nest stores X into the output box first and the GEMM adds
  /// alpha times the sum to it (beta = 1), as PyTorch's addmm does, so no
  /// pass reads the sums back (matchPrefill, CPU target, not widened).
  const tdl::Expr *prefill = nullptr;
  /// The prefilled body's alpha; null: 1.
  const tdl::Expr *alpha = nullptr;
  /// A fused epilogue's kernel (GemmEpilogue.cpp) has stored X into the
  /// output box: the GEMM adds this alpha (a C++ literal) times the sum to
  /// it (beta = 1); empty: none.
  std::string epilogueAlpha;
  /// A convolution (Convolution.cpp): `a` is the weight [co, ci, ky, kx],
  /// `b` the input read through an im2col buffer.
  bool im2col = false;
  /// The weight is read [ci, co, ky, kx] (a gradient of the input: the
  /// output's channel variable indexes the weight's second dimension).
  bool weightSwapped = false;
  /// A convolution's weight gradient: `a` is the gradient [n, co, oy, ox],
  /// `b` the input read through an im2col buffer, the output [co, ci, ky,
  /// kx] is a sum over n of products of the two.
  bool weightGradient = false;
  /// A 2-D transpose `X[j, i]` (Transpose.cpp): `a` is the read.
  bool transposeCopy = false;
  /// Only the (ky, kx) where this integer condition holds contribute (the
  /// `select` of a strided convolution's input gradient); null: all.
  const tdl::Expr *cond = nullptr;
};

/// A sum `Sum(lambda k..: select(key == w && rest.., value, 0.0))` whose key
/// depends on the sum's own variables only and w is an output variable
/// (KeyedSum.cpp): it adds, for each w, the points whose key is w.
struct KeyedSum {
  const tdl::Expr *key = nullptr;
  unsigned outputVar = 0;
  const tdl::Expr *value = nullptr;
  /// The other conjuncts of the condition, checked per point of a bucket.
  SmallVector<const tdl::Expr *, 2> rest;
};

/// CUDA target (CudaEmitter.cpp): a reduction shared by several output
/// elements (free in some output variables only), computed once per value
/// of those variables by a kernel launched before the element kernel, one
/// thread per value running the reduction's sequential loop, into a table
/// of doubles in scratch device memory that the later kernels read.
struct CudaPhase {
  /// The reduction's free (output) variables, increasing: one thread per
  /// point of their box.
  SmallVector<unsigned, 4> vars;
  /// The thread's statements, computing `value`.
  std::vector<std::string> lines;
  std::string value;
  /// Where the reduction was hoisted out of enclosing reductions: it is
  /// computed only where their ranges are not empty (empty: always).
  std::string guard;
  /// The table's name, and the read of its entry at the variables.
  std::string table, entry;
  /// Threads per point of the variables' box: more than 1 for the partial
  /// sums of a split reduction (thread `part` of a point sums the part'th
  /// strided share of its points into entry `rank * parts + part`).
  unsigned parts = 1;
  /// The parts of a split reduction.
  static constexpr unsigned SplitParts = 256;
};

/// A list of statements, one line each; indentation is added at the end.
struct Scope {
  std::vector<std::string> lines;
  /// Index variables (ids) this scope binds.
  SmallVector<unsigned, 2> vars;
  /// A select branch: nothing inside may be hoisted above it.
  bool barrier = false;
  /// The sums lowered into this scope (lowerReduce): each one's body text
  /// with its variables numbered, accumulator and variables' names, so an
  /// identical later sum takes the value where the ranges are the same.
  struct Sum {
    std::string key, acc;
    std::vector<std::string> vars;
  };
  std::vector<Sum> sums;
};

class KernelBuilder {
public:
  KernelBuilder(const KernelInstance &inst, const KernelOptions &options);

  /// Generates the function `name`; `error` is set on failure.
  std::string build(StringRef name);
  /// Generates the CUDA kernel `name` (CudaEmitter.cpp): a device body,
  /// its __global__ wrapper and launch function, and a host function in
  /// the C++ ABI that runs the body over the emulated grid.
  std::string buildCuda(StringRef name);
  /// Checks the instance, resolves the extents, matches a contraction and
  /// lowers the body into `value` and the scopes; false on failure.
  bool lowerBody(std::string &value);
  /// The kernel's view of its boxes, the clamped reduction ranges and the
  /// early returns on an empty output box.
  void declareBoxes(std::vector<std::string> &lines);
  /// The store of `value` into the output element at the output variables.
  std::string storeStatement(const std::string &value) const;
  /// `value` (a double) converted to the output's element type, as stored.
  std::string storedValue(const std::string &value) const;
  /// One line naming the operator with its tensors' types and shapes.
  std::string describe() const;
  llvm::Error takeError() const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), errorMessage);
  }
  bool failed() const { return !errorMessage.empty(); }
  ArrayRef<int64_t> getVarExtents() const { return varExtents; }
  bool usesBlas() const { return contraction.hasValue(); }
  /// How the kernel computes (after lowerBody).
  KernelKind getKind() const;

  // ExprLowering.cpp
  /// A C++ expression of type double computing `e`; may add statements to
  /// the current scope.
  std::string lowerValue(const tdl::Expr &e);
  /// A C++ expression of type bool: `e != 0`.
  std::string lowerCond(const tdl::Expr &e);
  /// True if `e` is integer arithmetic on index variables, params and
  /// literals (no read, no reduction): it is computed in int64_t.
  bool isPureInt(const tdl::Expr &e) const;
  /// A C++ expression of type std::int64_t for a pure integer expression.
  std::string lowerInt(const tdl::Expr &e);
  /// The interval of a pure integer expression over the variables' full
  /// ranges; None if unknown (or a variable's range is empty).
  llvm::Optional<Interval> intervalOf(const tdl::Expr &e) const;
  /// The extents of the reduction variables of `e` (sets varExtents).
  void resolveExtents(const tdl::ReduceExpr &e);
  void fail(const Twine &msg);

  // CudaEmitter.cpp
  /// CUDA target: for a reduction lowered at scope `target` (lowerReduce's),
  /// free in fewer output variables than the current thread binds and
  /// inside no select branch, adds a CudaPhase computing it (once) and
  /// returns the read of its table entry; None otherwise.
  llvm::Optional<std::string> hoistToPhase(const tdl::ReduceExpr &e,
                                           unsigned target);

  // Contraction.cpp
  /// Finds a contraction of the body that BLAS can compute; with
  /// `widen16`, also one over f16/bf16 tensors (CPU target only).
  llvm::Optional<Contraction> matchContraction(bool widen16 = false);
  /// Sets `c.prefill` and `c.alpha` where the body is `X + alpha * Sum`
  /// around `c`'s sum (Contraction::prefill); false if it is not.
  bool matchPrefill(Contraction &c) const;
  /// Emits the loop nest over the output box storing `value`, the lowered
  /// `body` (the op's, or a prefilled contraction's X).
  void emitLoopNest(const std::string &value, const tdl::Expr &body,
                    std::vector<std::string> &lines);
  /// An element-wise body whose every read is at the output element's own
  /// index (and that uses the index variables nowhere else): the inputs it
  /// reads, in increasing order; none for another body (docs/CodeGen.md,
  /// "Dense runs"). Only for an output of rank `minRank` or more (the
  /// kernel's own branch: 2; a rank-1 loop nest is already one loop).
  /// With `scalars`, reads of rank-0 inputs (the same value at every
  /// element, wherever the loop runs) are allowed too, and not listed.
  llvm::Optional<std::vector<unsigned>>
  getDenseRunInputs(unsigned minRank = 2, bool scalars = false) const;
  /// For such a body: the branch that runs the call as one loop over its
  /// elements where every box it touches is walked as one contiguous run
  /// (the same value per element as the loop nest after it).
  void emitDenseRun(const std::string &value, ArrayRef<unsigned> inputs,
                    std::vector<std::string> &lines);
  /// The offset of the element at `index` (one expression per output
  /// dimension) in the widened contraction's dense box buffer `gsum`.
  std::string boxOffset(ArrayRef<std::string> index) const;
  /// The description of `c` that the device executor computes with
  /// library GEMMs: a contraction of the whole body, or a prefilled one
  /// (matchPrefill) whose X is one fill (GemmBias); None otherwise, and
  /// for widened operands.
  llvm::Optional<runtime::DeviceGemm> describeGemm(const Contraction &c) const;
  /// The statements calling BLAS for `c`.
  void emitContraction(const Contraction &c, std::vector<std::string> &out);
  /// Where a GEMM call of `c` starts along variable `id`: a batch variable
  /// at its value, i and j at the box's start, k at its clamped range's.
  std::string gemmStart(const Contraction &c, unsigned id) const;
  /// Emits the GEMM's extents gm, gn, gk, then `declare` (if any), then
  /// opens the non-empty check and the loops over the batch variables.
  void openGemmBox(const Contraction &c, StringRef declare,
                   std::vector<std::string> &out);
  /// Emits a widened contraction (`c.widened`): double copies, dgemm into
  /// `gsum`, and for a whole-body one the rounded stores.
  void emitWidenedContraction(const Contraction &c, std::vector<std::string> &out);

  // Convolution.cpp
  /// Finds a 2-D convolution of the body that im2col + GEMM can compute:
  /// a forward convolution, an input gradient or a weight gradient.
  llvm::Optional<Contraction> matchConvolution();
  /// The statements of the im2col GEMM for `c`.
  void emitConvolution(const Contraction &c, std::vector<std::string> &out);
  /// The same for a weight gradient.
  void emitWeightGradient(const Contraction &c, std::vector<std::string> &out);

  // ConvolutionDescription.cpp
  /// The description of `c` for cuDNN (a forward convolution, an input or
  /// a weight gradient) when its strided reads are those of one stride,
  /// padding and dilation per spatial dimension, checked at every index of
  /// their ranges; None otherwise.
  llvm::Optional<runtime::DeviceConv> describeConvolution(const Contraction &c) const;

  // BatchNorm.cpp
  /// The description for cuDNN of a body that is a training-mode batch
  /// normalization's output (native_batch_norm__0's form); None otherwise.
  llvm::Optional<runtime::DeviceBatchNorm> matchBatchNorm() const;

  // Pooling.cpp
  /// The description for cuDNN of a body that is a forward 2-D max or
  /// average pooling; None otherwise.
  llvm::Optional<runtime::DevicePooling> matchPooling() const;

  // KeyedSum.cpp
  /// Matches a keyed sum (CPU target, not inside another reduction).
  llvm::Optional<KeyedSum> matchKeyedSum(const tdl::ReduceExpr &e) const;
  /// Emits the buckets of `k` before the loop nest and the sum over one
  /// bucket in scope `target`; returns its accumulator.
  std::string lowerKeyedSum(const tdl::ReduceExpr &e, const KeyedSum &k,
                            unsigned target);

  // Transpose.cpp
  /// Finds a 2-D transpose that OpenBLAS can copy.
  llvm::Optional<Contraction> matchTranspose();
  /// The statement copying it.
  void emitTranspose(const Contraction &c, std::vector<std::string> &out);

  /// `name` of index variable `id` in the generated code.
  std::string varName(unsigned id) const;
  /// The offset of element `index` (C++ int64 expressions) in input `t`'s box.
  std::string inputOffset(unsigned t, ArrayRef<std::string> index) const;
  /// The offset of the output element at the current output variables.
  std::string outputOffset(ArrayRef<std::string> index) const;
  std::string fresh(StringRef prefix);
  Scope &current() { return scopes.back(); }

private:
  std::string lowerRead(const tdl::TensorReadExpr &e);
  std::string lowerReduce(const tdl::ReduceExpr &e);
  /// A reduction of the body that depends on some output variables but not
  /// on an outer one, computed once per value of those variables into a
  /// table before the loop nest; the read of its entry, or None.
  llvm::Optional<std::string> tabulateReduce(const tdl::ReduceExpr &e);
  /// tabulateReduce for a reduction whose body reads along its last free
  /// variable (a column sum): the reduction's loops outside, the table's
  /// inside.
  std::string tabulateAcross(const tdl::ReduceExpr &e, ArrayRef<unsigned> free);
  /// Declares a table of doubles over the box of the variables `free`
  /// (`init`: its elements' value, empty for none) and returns its entry at
  /// the variables' current values.
  std::string declareTable(ArrayRef<unsigned> free, StringRef init,
                           std::vector<std::string> &lines);
  std::string lowerSelect(const tdl::CallExpr &e);
  std::string lowerCall(const tdl::CallExpr &e);
  std::string lowerBinary(const tdl::BinaryExpr &e);
  std::string constant(double v) const;
  llvm::Optional<int64_t> foldInt(const tdl::Expr &e) const;

public:
  const KernelInstance &inst;
  const tdl::OpDecl &op;
  KernelOptions options;
  SmallVector<int64_t, 4> intParams;
  /// The full extent of every index variable, by id.
  SmallVector<int64_t, 16> varExtents;
  /// The open scopes, outermost first: one per output loop level (level 0
  /// before every loop), then reduction loops and select branches.
  std::vector<Scope> scopes;
  llvm::Optional<Contraction> contraction;
  /// CUDA target: the body is a contraction cuBLAS computes on the device.
  bool deviceGemm = false;
  /// Building the CUDA kernel (buildCuda): no blocked sums over exp
  /// (lowerReduce), which would put a 2 KB array in every thread.
  bool cudaTarget = false;
  /// CUDA target: the reductions computed before the element kernel, in
  /// launch order (CudaEmitter.cpp).
  std::vector<CudaPhase> cudaPhases;
  /// CUDA target: the reduction a split phase is lowering (hoistToPhase):
  /// its loop is one strided share of its points, the thread's `part`.
  const tdl::ReduceExpr *cudaSplit = nullptr;
  /// CUDA target: the phase of each reduction already in cudaPhases.
  llvm::DenseMap<const tdl::ReduceExpr *, unsigned> cudaTables;
  /// CUDA target: the output variables a thread of the kernel being lowered
  /// binds (all of them for the element kernel, a phase's own).
  SmallVector<unsigned, 4> threadVars;
  /// The whole body is a contraction: how library GEMMs compute it.
  llvm::Optional<runtime::DeviceGemm> gemm;
  /// The body is a forward convolution: how cuDNN computes it.
  llvm::Optional<runtime::DeviceConv> conv;
  /// The body is a batch normalization: how cuDNN computes it.
  llvm::Optional<runtime::DeviceBatchNorm> batchNorm;
  /// The body is a 2-D pooling: how cuDNN computes it.
  llvm::Optional<runtime::DevicePooling> pooling;
  unsigned counter = 0;
  /// Per input position: a C++ expression of the input's element type that
  /// replaces its reads (FusedKernel.cpp: each op of a fused chain reads the
  /// previous op's value, computed in the same kernel); empty: none.
  std::vector<std::string> inlinedInputs;
  /// Inside tabulateReduce (nothing is tabulated twice).
  bool tabulating = false;
  /// The first error, naming the operator; empty if none.
  std::string errorMessage;
};

/// The error of a fused chain's kernel that cannot be emitted: "cannot
/// fuse `what`'a' -> 'b' ...: why" (FusedKernel.cpp, GemmEpilogue.cpp).
llvm::Error refuseChain(ArrayRef<KernelInstance> chain, StringRef what,
                        const Twine &why);

/// Appends a fused chain kernel's first lines: `bool name(const
/// KernelCall &fused) {`, its box's `lo` and `hi`, and a return of true
/// where the box of `rank` variables is empty. Returns the position of the
/// signature line (for the TOFU_KG_WIDE mark).
std::size_t emitFusedSignature(StringRef name, unsigned rank,
                               std::vector<std::string> &lines);

/// Ends a fused chain kernel begun by emitFusedSignature (its body's
/// blocks closed): `return true;`, its closing brace, the TOFU_KG_WIDE mark
/// where it calls the vector forms; the kernel's text, indented.
std::string finishFusedKernel(std::vector<std::string> &lines,
                              std::size_t signature);

/// Appends `callK`, op k's call over the fused box, for each op k of
/// `chain` from `from` on: its inputs, the fused call's in the ops' order
/// (the ops before `from` taking the first), its output the fused one's.
void emitChainCalls(ArrayRef<KernelInstance> chain, unsigned from,
                    std::vector<std::string> &lines);

/// Appends the lambda factory of one op of a fused chain (FusedKernel.cpp,
/// GemmEpilogue.cpp): `k`'s call bound to `callName`, its box declarations
/// (without the early returns, which the fused kernel makes itself) and
/// constants, returning a lambda over the output variables (and
/// `extraParam`, if any) whose body is the op's per element statements
/// followed by `last`; `lambda` is the factory's result.
void emitElementLambda(KernelBuilder &k, const std::string &lambda,
                       const std::string &callName,
                       const std::string &extraParam, const std::string &last,
                       std::vector<std::string> &lines);

/// Re-indents `lines` by their braces, two spaces a level.
std::string indentLines(ArrayRef<std::string> lines);

/// The C++ element type of `type` in memory ("float", "std::int64_t", ...).
const char *getElementTypeName(DType type);

} // namespace codegen
} // namespace tofu

#endif // TOFU_LIB_CODEGEN_KERNELBUILDER_H
