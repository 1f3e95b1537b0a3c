//===- GeneratedCudaKernels.h - A graph's CUDA kernels in a program -*- C++ -*-===//
//
// This file declares what a source written by `tofu-graph --emit=cuda-linked`
// defines (tofu_add_cuda_kernels in CMake compiles it with nvcc): a graph's
// CUDA kernels, one launch function per op, and per op whether cuBLAS or
// cuDNN computes it and how, as tofu-run's cuda backend loads them; and
// createCudaLinkOptions, which puts them on this process's GPUs for a
// LinkedPlan of any plan of that graph (library TofuRuntimeCUDA).
//
// A generated source defines, in the namespace given by --cpp-namespace,
//
//   const tofu::runtime::GeneratedCudaKernels &getGeneratedCudaKernels();
//
// Declare it with TOFU_DECLARE_CUDA_KERNELS(NS). docs/Linking.md, "On GPUs".
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_GENERATEDCUDAKERNELS_H
#define TOFU_RUNTIME_GENERATEDCUDAKERNELS_H

#include "tofu/Runtime/CudaDevice.h"
#include "tofu/Runtime/LinkedPlan.h"

namespace tofu {
namespace runtime {

/// A graph's CUDA kernels, per op in graph order.
struct GeneratedCudaKernels {
  /// The graph file they were generated from, as tofu-graph was given it.
  const char *graphName = "";
  std::vector<CudaLaunchFn> launches;
  /// CudaOptions' per-kernel library plans (null where none applies).
  std::vector<std::optional<DeviceGemm>> gemms;
  std::vector<std::optional<DeviceConv>> convs;
  std::vector<std::optional<DeviceBatchNorm>> batchNorms;
  std::vector<std::optional<DevicePooling>> poolings;
};

/// LinkOptions running `plan` on this process's GPUs with `kernels` (of the
/// plan's graph), over `transport` (null: the thread transport of
/// `timeout`): the transport's local workers are placed on the GPUs
/// (placeWorkersOnGpus, `localRank` this process's index on its node under
/// MPI), with NCCL between them. Throws RuntimeError when there is no
/// usable GPU or the kernels are of another graph.
LinkOptions createCudaLinkOptions(const GeneratedPlan &plan,
                                  const GeneratedCudaKernels &kernels,
                                  std::unique_ptr<Transport> transport,
                                  unsigned localRank,
                                  std::chrono::milliseconds timeout =
                                      std::chrono::milliseconds(60000));

} // namespace runtime
} // namespace tofu

/// Declares the kernels a generated CUDA source defines in namespace `NS`.
#define TOFU_DECLARE_CUDA_KERNELS(NS)                                          \
  namespace NS {                                                               \
  const ::tofu::runtime::GeneratedCudaKernels &getGeneratedCudaKernels();      \
  }

#endif // TOFU_RUNTIME_GENERATEDCUDAKERNELS_H
