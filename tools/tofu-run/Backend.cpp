//===- Backend.cpp - Where tofu-run's steps run ---------------------------===//
//
// This file implements tofu-run's backends. The cuda backend exists when
// TofuRuntimeCUDA was built (TOFU_HAVE_CUDA_RUNTIME): it asks the CUDA
// runtime for devices, compiles the graph's CUDA unit (emitGraphKernels
// with KernelTarget::Cuda) with nvcc for the installed GPUs, loads its
// tofu_graph_cuda_launches table, and places the process's workers on its
// GPUs (placeWorkersOnGpus: worker w on GPU w modulo the number of GPUs in
// one process, more workers than GPUs being virtual workers; under mpirun
// the rank's index on its node modulo the number of GPUs). The device
// backends run the transport's local workers: all of them, or this MPI
// rank's one, with transfers between ranks over the transport (cuda-host)
// or NCCL (cuda).
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/Error.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#ifdef TOFU_HAVE_CUDA_RUNTIME
#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Runtime/CudaDevice.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <dlfcn.h>

namespace {
llvm::cl::opt<bool> cudaLoadOnly(
    "cuda-load-only",
    llvm::cl::desc("Testing: with --backend cuda, compile and load the "
                   "graph's CUDA kernels, print how many ops have a launch "
                   "function, and exit 0 (no GPU needed)"),
    llvm::cl::Hidden);
llvm::cl::opt<bool> cudaUseCudnn(
    "cuda-cudnn",
    llvm::cl::desc("Testing: with --backend cuda, compute convolutions, batch "
                   "norms and poolings with cuDNN where the box allows "
                   "(default); false runs their generated kernels, to tell "
                   "whether cuDNN causes a --check difference"),
    llvm::cl::init(true), llvm::cl::Hidden);
llvm::cl::opt<bool> cudaCompareLibraries(
    "cuda-compare-libraries",
    llvm::cl::desc("Testing: with --backend cuda, also run the generated "
                   "kernel of every op cuBLAS or cuDNN computes and print the "
                   "largest difference per call on stderr"),
    llvm::cl::Hidden);
llvm::cl::list<std::string> cudaCudnnWithout(
    "cuda-cudnn-without",
    llvm::cl::desc("Testing: with --backend cuda, run these kinds of op on "
                   "their generated kernels instead of cuDNN, to tell which "
                   "one causes a --check difference: conv-forward, "
                   "conv-backward-data, conv-backward-filter, batch-norm, "
                   "pooling"),
    llvm::cl::CommaSeparated, llvm::cl::Hidden);

/// The kinds of op --cuda-cudnn-without names.
const llvm::StringLiteral CudnnKinds[] = {"conv-forward", "conv-backward-data",
                                          "conv-backward-filter", "batch-norm",
                                          "pooling"};

/// Whether --cuda-cudnn and --cuda-cudnn-without let cuDNN run `kind`.
bool cudnnRuns(llvm::StringRef kind) {
  return cudaUseCudnn &&
         llvm::find(cudaCudnnWithout, kind) == cudaCudnnWithout.end();
}

llvm::StringRef getConvKindName(tofu::runtime::ConvKind kind) {
  switch (kind) {
  case tofu::runtime::ConvKind::Forward:
    return "conv-forward";
  case tofu::runtime::ConvKind::BackwardData:
    return "conv-backward-data";
  case tofu::runtime::ConvKind::BackwardFilter:
    return "conv-backward-filter";
  }
  return "";
}
} // namespace
#endif

using namespace tofu;

#ifdef TOFU_HAVE_CUDA_RUNTIME
namespace {
/// Compiles and loads the CUDA unit of `g`; fills the launch table and the
/// contractions cuBLAS computes.
std::shared_ptr<void> loadCudaKernels(const graph::Graph &g,
                                      graph::SpecLibrary &specs,
                                      runtime::CudaOptions &options) {
  for (const std::string &kind : cudaCudnnWithout)
    if (!llvm::is_contained(CudnnKinds, kind))
      throw runtime::RuntimeError(
          "--cuda-cudnn-without: '" + kind + "' is none of " +
          llvm::join(std::begin(CudnnKinds), std::end(CudnnKinds), ", "));
  codegen::KernelOptions kernelOptions;
  kernelOptions.target = codegen::KernelTarget::Cuda;
  auto unit = codegen::emitGraphKernels(g, specs, kernelOptions);
  if (!unit)
    throw runtime::RuntimeError(llvm::toString(unit.takeError()));
  codegen::KernelCompiler::Options compile;
  compile.compiler = TOFU_NVCC_PATH;
  compile.flags = {"-x", "cu", "-std=c++17", "--expt-relaxed-constexpr",
                   "-diag-suppress", "177", "-arch=native", "-O3",
                   "-shared", "-Xcompiler", "-fPIC"};
  compile.libs = {};
  auto library = codegen::KernelCompiler(compile).compile(unit->source);
  if (!library)
    throw runtime::RuntimeError("compiling the CUDA kernels: " +
                                llvm::toString(library.takeError()));
  std::string path = (*library)->getPath().str();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  using TableFn = const runtime::CudaLaunchFn *(*)(unsigned *);
  auto table = handle ? reinterpret_cast<TableFn>(
                            dlsym(handle, codegen::GraphCudaLaunchesSymbol))
                      : nullptr;
  if (!table)
    throw runtime::RuntimeError(path + " has no " +
                                codegen::GraphCudaLaunchesSymbol);
  unsigned count = 0;
  const runtime::CudaLaunchFn *launches = table(&count);
  options.launches.assign(launches, launches + count);
  // Contractions (whole bodies, or with a bias) run as cuBLAS GEMMs
  // (DeviceGemm.h), convolutions and their input and weight gradients
  // (DeviceConv.h), batch norms (DeviceBatchNorm.h) and poolings
  // (DevicePooling.h) on cuDNN.
  options.gemms.assign(count, std::nullopt);
  options.convs.assign(count, std::nullopt);
  options.batchNorms.assign(count, std::nullopt);
  options.poolings.assign(count, std::nullopt);
  for (unsigned op = 0; op != count && op != unit->opKernel.size(); ++op) {
    int k = unit->opKernel[op];
    if (k >= 0 && unit->kernels[k].gemm)
      options.gemms[op] = *unit->kernels[k].gemm;
    if (k < 0)
      continue;
    const codegen::GeneratedKernel &kernel = unit->kernels[k];
    if (kernel.conv && cudnnRuns(getConvKindName(kernel.conv->kind)))
      options.convs[op] = *kernel.conv;
    if (kernel.batchNorm && cudnnRuns("batch-norm"))
      options.batchNorms[op] = *kernel.batchNorm;
    if (kernel.pooling && cudnnRuns("pooling"))
      options.poolings[op] = *kernel.pooling;
  }
  std::shared_ptr<codegen::KernelLibrary> keep(std::move(*library));
  return std::shared_ptr<void>(handle, [keep](void *h) { dlclose(h); });
}
} // namespace
#endif

std::string tofu::checkBackend(Backend backend) {
  if (backend != Backend::Cuda)
    return "";
#ifdef TOFU_HAVE_CUDA_RUNTIME
  std::string why;
  if (cudaLoadOnly || runtime::getCudaDeviceCount(why) > 0)
    return "";
  return "no usable GPU: " + why;
#else
  return "this tofu-run was built without the CUDA runtime (TofuRuntimeCUDA)";
#endif
}

int64_t tofu::getDeviceFreeMemory(Backend backend, unsigned localRank,
                                  std::string &why) {
  if (backend != Backend::Cuda) {
    why = "not on a GPU";
    return -1;
  }
#ifdef TOFU_HAVE_CUDA_RUNTIME
  int count = runtime::getCudaDeviceCount(why);
  size_t freeBytes = 0, totalBytes = 0;
  cudaError_t status = count > 0 ? cudaSetDevice(int(localRank) % count)
                                 : cudaErrorNoDevice;
  if (status == cudaSuccess)
    status = cudaMemGetInfo(&freeBytes, &totalBytes);
  if (status == cudaSuccess)
    return int64_t(freeBytes);
  if (count > 0)
    why = std::string("cudaMemGetInfo: ") + cudaGetErrorString(status);
  return -1;
#else
  why = checkBackend(backend);
  return -1;
#endif
}

Engine tofu::createEngine(Backend backend, const runtime::ExecutablePlan &plan,
                          runtime::KernelProvider &kernels,
                          const graph::Graph &g, graph::SpecLibrary &specs,
                          std::unique_ptr<runtime::Transport> transport,
                          unsigned localRank, bool timeKernels) {
  Engine engine;
  engine.transport = std::move(transport);
  if (backend == Backend::Cpu) {
    engine.executor = std::make_unique<runtime::Executor>(plan, kernels,
                                                          *engine.transport);
    return engine;
  }
  std::vector<unsigned> local =
      runtime::getLocalWorkers(plan, *engine.transport);
  switch (backend) {
  case Backend::Cpu:
    break;
  case Backend::CudaHost:
    engine.device =
        runtime::createHostDevice(plan.workers, kernels, 0, local);
    engine.communicator = runtime::createHostCommunicator(
        *engine.device, engine.transport.get());
    break;
  case Backend::Cuda: {
#ifdef TOFU_HAVE_CUDA_RUNTIME
    runtime::CudaOptions options;
    if (cudaLoadOnly) {
      engine.kernelLibrary = loadCudaKernels(g, specs, options);
      unsigned n = 0;
      for (runtime::CudaLaunchFn fn : options.launches)
        n += fn != nullptr;
      unsigned gemms = 0, dnns = 0;
      for (const auto &gemm : options.gemms)
        gemms += gemm.has_value();
      for (const auto &conv : options.convs)
        dnns += conv.has_value();
      for (const auto &batchNorm : options.batchNorms)
        dnns += batchNorm.has_value();
      for (const auto &pooling : options.poolings)
        dnns += pooling.has_value();
      llvm::outs() << "loaded " << n << " CUDA launch functions for "
                   << options.launches.size() << " ops, " << gemms
                   << " on cuBLAS, " << dnns << " on cuDNN\n";
      llvm::outs().flush();
      std::exit(0);
    }
    std::string why;
    int gpus = runtime::getCudaDeviceCount(why);
    if (gpus <= 0)
      throw runtime::RuntimeError("--backend cuda: no usable GPU: " + why);
    options.deviceOfWorker = runtime::placeWorkersOnGpus(
        plan.workers, local, localRank, unsigned(gpus));
    engine.kernelLibrary = loadCudaKernels(g, specs, options);
    if (timeKernels) {
      engine.kernelTimes = std::make_unique<runtime::KernelTimes>();
      options.times = engine.kernelTimes.get();
    }
    options.compareLibraries = cudaCompareLibraries;
    engine.device = runtime::createCudaDevice(options);
    engine.communicator = runtime::createCudaCommunicator(
        *engine.device, engine.transport.get());
    break;
#else
    throw runtime::RuntimeError("--backend cuda: " + checkBackend(backend));
#endif
  }
  }
  engine.executor = std::make_unique<runtime::DeviceExecutor>(
      plan, *engine.device, *engine.communicator, engine.transport.get());
  return engine;
}

bool tofu::writeKernelTimes(const Engine &engine, const graph::Graph &g,
                            llvm::StringRef path) {
  llvm::json::Array ops;
  double total = 0;
  if (const runtime::KernelTimes *times = engine.kernelTimes.get()) {
    for (unsigned k = 0, e = times->seconds.size(); k != e; ++k) {
      if (times->launches[k] == 0)
        continue;
      total += times->seconds[k];
      llvm::json::Object op{
          {"op", int64_t(k)},
          {"launches", int64_t(times->launches[k])},
          {"library", runtime::getKernelLibraryName(times->library[k])},
          {"seconds", times->seconds[k]}};
      if (k < g.getNumOps()) {
        op["name"] = g.getOp(k).name;
        op["type"] = g.getOp(k).type;
      }
      ops.push_back(std::move(op));
    }
  }
  llvm::json::Object out{
      {"rounds", int64_t(engine.kernelTimes ? engine.kernelTimes->rounds : 0)},
      {"total_seconds", total},
      {"ops", std::move(ops)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "tofu-run: error: cannot write '" << path
                 << "': " << ec.message() << "\n";
    return false;
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  return true;
}
