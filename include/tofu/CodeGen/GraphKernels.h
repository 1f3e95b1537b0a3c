//===- GraphKernels.h - One translation unit of kernels per graph -*- C++ -*-===//
//
// This file declares the graph-level kernel generator: for every op of a
// tofu-graph it instantiates the op's TDL operator at the op's shapes,
// params and dtypes (as the planner and the verifier do), generates its
// kernel, and shares one kernel among ops whose instances generate the same
// code. The result is one C++ translation unit ending in
//
//   extern "C" const tofu::runtime::KernelInfo *tofu_graph_kernels(unsigned *count);
//
// which returns one KernelInfo per op in graph order (`fn` null for an op
// without a kernel: an opaque operator, f16 tensors).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CODEGEN_GRAPHKERNELS_H
#define TOFU_CODEGEN_GRAPHKERNELS_H

#include "tofu/CodeGen/KernelEmitter.h"
#include "tofu/Runtime/Fusion.h"

namespace tofu {
namespace graph {
class Graph;
class SpecLibrary;
} // namespace graph

namespace codegen {

/// The symbol of the table function of a graph's translation unit.
constexpr const char *GraphKernelsSymbol = "tofu_graph_kernels";
/// The symbol of the launch table of a CUDA unit (KernelTarget::Cuda),
/// defined under __CUDACC__ only: one
/// `cudaError_t (*)(const KernelCall &, cudaStream_t)` per op, null for an
/// op without a kernel. In such a unit the KernelInfo table's functions
/// run the kernel bodies on the host over the emulated grid.
constexpr const char *GraphCudaLaunchesSymbol = "tofu_graph_cuda_launches";

/// The symbol of the fused-chain table of a C++ unit: one
/// `bool (*)(const KernelCall &)` per op i and chain length n = 2 ..
/// runtime::MaxChainLength, at getFusedTableIndex(i, n): the fused kernel
/// of ops i .. i + n - 1 (emitFusedKernel), or where op i is a GEMM, of
/// op i, the one reader of its value, that one's, and so on, n ops
/// wherever they are (emitEpilogueKernel, for every n up to its affine
/// epilogue's end), null where there is none; the
/// table has getFusedTableSize(ops) entries.
constexpr const char *GraphFusedSymbol = "tofu_graph_fused";

/// The fused-chain table's entry of the chain of `length` ops from op
/// `first`.
inline unsigned getFusedTableIndex(unsigned first, unsigned length) {
  return first * (runtime::MaxChainLength - 1) + length - 2;
}
/// The fused-chain table's size for a graph of `numOps` ops.
inline unsigned getFusedTableSize(unsigned numOps) {
  return numOps * (runtime::MaxChainLength - 1);
}

/// The instance of op `opIndex` of `g` (its operator instantiated through
/// `specs`, which owns it). Fails with a message naming the op.
llvm::Expected<KernelInstance> makeKernelInstance(const graph::Graph &g,
                                                  unsigned opIndex,
                                                  graph::SpecLibrary &specs);

/// The kernels of a whole graph.
struct GraphKernels {
  /// The translation unit.
  std::string source;
  /// The distinct kernels, in order of first use.
  std::vector<GeneratedKernel> kernels;
  /// Per op: the index of its kernel in `kernels`, or -1.
  std::vector<int> opKernel;
  /// Per op without a kernel: why (empty for the others).
  std::vector<std::string> notes;
  /// Per fused-table entry (C++ target, getFusedTableIndex): the name of
  /// the fused kernel of that chain in the unit, empty where there is none.
  std::vector<std::string> fused;
};

/// Generates the kernels of every op of `g` (see above). An op whose
/// kernel cannot be generated gets a null entry and a note; only a
/// malformed graph (an op without an output) fails.
llvm::Expected<GraphKernels> emitGraphKernels(const graph::Graph &g,
                                              graph::SpecLibrary &specs,
                                              const KernelOptions &options = {});

} // namespace codegen
} // namespace tofu

#endif // TOFU_CODEGEN_GRAPHKERNELS_H
