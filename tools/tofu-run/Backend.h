//===- Backend.h - Where tofu-run's steps run --------------------*- C++ -*-===//
//
// This file declares tofu-run's backends: the CPU Executor (worker threads
// and the thread transport), the device executor on CUDA GPUs, and the
// device executor on its host emulation (`cuda-host`, for testing the
// device executor's logic without a GPU). docs/DeviceExecutor.md.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_BACKEND_H
#define TOFU_TOOLS_TOFU_RUN_BACKEND_H

#include "tofu/Graph/Graph.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/Executor.h"
#include "tofu/Runtime/KernelTimes.h"

#include <string>

namespace tofu {

enum class Backend { Cpu, Cuda, CudaHost };

/// An executor and what it runs on (members destroyed executor first).
struct Engine {
  std::unique_ptr<runtime::Transport> transport;
  std::unique_ptr<runtime::Device> device;
  std::unique_ptr<runtime::Communicator> communicator;
  std::unique_ptr<runtime::StepExecutor> executor;
  /// What keeps the device's kernels loaded (cuda).
  std::shared_ptr<void> kernelLibrary;
  /// Per-op device times (cuda, when asked for: createEngine's timeKernels).
  std::unique_ptr<runtime::KernelTimes> kernelTimes;
};

/// Why `backend` cannot run here ("" if it can): for cuda, that this
/// tofu-run was built without the CUDA runtime or that the CUDA runtime
/// reports no device.
std::string checkBackend(Backend backend);

/// The free bytes of the GPU the process of local rank `localRank` uses
/// (cudaMemGetInfo), for --backend cuda; -1 with `why` set where they
/// cannot be known (another backend, no CUDA runtime, an error).
int64_t getDeviceFreeMemory(Backend backend, unsigned localRank,
                            std::string &why);

/// The engine running `plan` of graph `g` on `backend`: the CPU and
/// cuda-host backends run `kernels`; cuda compiles the graph's CUDA unit
/// with nvcc and runs its launch functions. Every backend runs the workers
/// `transport` (threads or MPI) runs in this process: the CPU executor
/// exchanges bytes through it; the device executor moves them with its
/// communicator (over the transport between MPI ranks for cuda-host, NCCL
/// for cuda) and sums counts and gathers results through it. `localRank`,
/// this process's index among those on its node, picks its GPU. Throws
/// RuntimeError.
Engine createEngine(Backend backend, const runtime::ExecutablePlan &plan,
                    runtime::KernelProvider &kernels, const graph::Graph &g,
                    graph::SpecLibrary &specs,
                    std::unique_ptr<runtime::Transport> transport,
                    unsigned localRank, bool timeKernels);

/// Writes `engine`'s per-op device times as JSON to `path`
/// (docs/DeviceExecutor.md, "On a GPU"); false, with the error on stderr, if
/// it cannot.
bool writeKernelTimes(const Engine &engine, const graph::Graph &g,
                      llvm::StringRef path);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_BACKEND_H
