//===- CudaDevice.h - The device executor on CUDA GPUs ----------*- C++ -*-===//
//
// This file declares the CUDA implementations of Device and Communicator
// (Device.h), library TofuRuntimeCUDA, built only when the CUDA toolkit is
// found. A worker has a GPU, its own cudaMalloc'd pool, its own stream and
// cuBLAS handle; several workers may share a GPU (virtual workers). The
// communicator moves a group over NCCL (ncclSend/ncclRecv in one
// ncclGroupStart/End) between GPUs and with cudaMemcpyAsync within one,
// on a communication stream per GPU ordered by events against the workers'
// streams. Across processes (one worker per MPI rank) each process holds
// its worker's GPU and one NCCL communicator over the K ranks, bootstrapped
// through the processes' Transport. docs/DeviceExecutor.md.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CUDADEVICE_H
#define TOFU_RUNTIME_CUDADEVICE_H

#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Runtime/DeviceGemm.h"
#include "tofu/Runtime/DevicePooling.h"
#include "tofu/Runtime/KernelTimes.h"

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace tofu {
namespace runtime {

/// A generated kernel's launch function (tofu_graph_cuda_launches).
using CudaLaunchFn = cudaError_t (*)(const KernelCall &, cudaStream_t);

struct CudaOptions {
  /// Per worker, the CUDA device it runs on; workers sharing a device are
  /// virtual workers; -1: another process runs it
  /// (placeWorkersOnGpus, Device.h).
  std::vector<int> deviceOfWorker;
  /// Per kernel index, its launch function (null: none).
  std::vector<CudaLaunchFn> launches;
  /// Per kernel index, whether cuBLAS computes it instead of its launch
  /// function, and how (DeviceGemm.h: planGemm's calls, one cublasSgemm or
  /// cublasDgemm each).
  std::vector<std::optional<DeviceGemm>> gemms;
  /// Per kernel index, whether cuDNN computes it (a convolution, its input
  /// or its weight gradient, DeviceConv.h) when planConvolution expresses
  /// the call's box as one cudnnConvolutionForward, BackwardData or
  /// BackwardFilter; otherwise, and in a build without cuDNN, the launch
  /// function runs.
  std::vector<std::optional<DeviceConv>> convs;
  /// Per kernel index, whether cuDNN computes it (a training-mode batch
  /// norm's output, DeviceBatchNorm.h) when planBatchNorm expresses the
  /// call's box as one cudnnBatchNormalizationForwardTraining; otherwise,
  /// and in a build without cuDNN, the launch function runs.
  std::vector<std::optional<DeviceBatchNorm>> batchNorms;
  /// Per kernel index, whether cuDNN computes it (a forward 2-D max or
  /// average pooling, DevicePooling.h) when planPooling expresses the
  /// call's box as one cudnnPoolingForward; otherwise, and in a build
  /// without cuDNN, the launch function runs.
  std::vector<std::optional<DevicePooling>> poolings;
  /// When set, every launch is timed with CUDA events and each
  /// synchronize after launches adds a round to it (KernelTimes.h).
  KernelTimes *times = nullptr;
  /// Testing: after every op cuBLAS or cuDNN computes, also run its
  /// generated kernel into a scratch copy of the output box and print, on
  /// stderr, the largest difference between the two (one line per call).
  bool compareLibraries = false;
};

/// The number of CUDA devices; 0 with `why` set to cudaGetDeviceCount's
/// error when it fails.
int getCudaDeviceCount(std::string &why);

/// Workers on CUDA devices; throws RuntimeError.
std::unique_ptr<Device> createCudaDevice(const CudaOptions &options);
/// The communicator of a device createCudaDevice made; throws RuntimeError.
/// When the device holds only some workers (one per process), `processes`
/// spans the processes (the MPI transport, worker w = rank w): the process
/// of worker 0 calls ncclGetUniqueId, broadcasts it over `processes`, and
/// every process calls ncclCommInitRank(K, id, its worker); each process
/// then issues the sends of its worker and the receives for it.
std::unique_ptr<Communicator>
createCudaCommunicator(Device &device, Transport *processes = nullptr);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CUDADEVICE_H
