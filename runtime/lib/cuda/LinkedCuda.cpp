//===- LinkedCuda.cpp - A linked plan on this process's GPUs --------------===//

#include "tofu/Runtime/GeneratedCudaKernels.h"

#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

using namespace tofu::runtime;

LinkOptions tofu::runtime::createCudaLinkOptions(
    const GeneratedPlan &plan, const GeneratedCudaKernels &kernels,
    std::unique_ptr<Transport> transport, unsigned localRank,
    std::chrono::milliseconds timeout) {
  if (kernels.launches.size() != plan.numKernels)
    throw RuntimeError(fmt::format(
        "the CUDA kernels of '{}' have {} ops but the plan of '{}' has {}: "
        "they are of another graph",
        kernels.graphName, kernels.launches.size(), plan.graphName,
        plan.numKernels));
  std::string why;
  int gpus = getCudaDeviceCount(why);
  if (gpus <= 0)
    throw RuntimeError("no usable GPU: " + why);
  LinkOptions options;
  options.timeout = timeout;
  options.transport = transport ? std::move(transport)
                                : createThreadTransport(plan.workers, timeout);
  CudaOptions cuda;
  cuda.deviceOfWorker =
      placeWorkersOnGpus(plan.workers, options.transport->getLocalWorkers(),
                         localRank, unsigned(gpus));
  cuda.launches = kernels.launches;
  cuda.gemms = kernels.gemms;
  cuda.convs = kernels.convs;
  cuda.batchNorms = kernels.batchNorms;
  cuda.poolings = kernels.poolings;
  options.device = createCudaDevice(cuda);
  options.communicator =
      createCudaCommunicator(*options.device, options.transport.get());
  return options;
}
