//===- LinkedKernels.h - A graph's kernels as part of a program -*- C++ -*-===//
//
// This file declares how a graph's translation unit of kernels
// (GraphKernels.h) becomes part of a training program: its table functions,
// extern "C" for tofu-run's dlopen, made internal under names of their own
// (internalizeGraphUnit), so that the units of several graphs or plans link
// into one binary; and the CUDA source `tofu-graph --emit=cuda-linked`
// writes (writeLinkedCudaKernels): the CUDA unit with its launch table and
// the ops cuBLAS and cuDNN compute, as runtime::GeneratedCudaKernels
// (runtime/include/tofu/Runtime/GeneratedCudaKernels.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CODEGEN_LINKEDKERNELS_H
#define TOFU_CODEGEN_LINKEDKERNELS_H

#include "tofu/CodeGen/GraphKernels.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
namespace codegen {

/// `source` (a GraphKernels unit) without its prelude, with its table
/// functions internal: tofu_graph_kernels as `graphKernels`,
/// tofu_graph_fused as `graphFused` and tofu_graph_cuda_launches as
/// `graphCudaLaunches` (each [[maybe_unused]] but the first). Meant for an
/// unnamed namespace. Fails when the unit lacks its prelude or its kernel
/// table.
llvm::Expected<std::string> internalizeGraphUnit(llvm::StringRef source);

/// Writes `text` as a C++ string literal (quotes and backslashes escaped).
void writeStringLiteral(llvm::raw_ostream &os, llvm::StringRef text);

/// Writes the CUDA unit `kernels` (KernelTarget::Cuda) of graph `graphName`
/// as a source defining `getGeneratedCudaKernels()` in `cppNamespace`.
llvm::Error writeLinkedCudaKernels(llvm::raw_ostream &os,
                                   const GraphKernels &kernels,
                                   llvm::StringRef graphName,
                                   llvm::StringRef cppNamespace);

} // namespace codegen
} // namespace tofu

#endif // TOFU_CODEGEN_LINKEDKERNELS_H
