//===- DevicePlacement.cpp - Which GPU runs which worker ------------------===//
//
// This file implements placeWorkersOnGpus (Device.h): the rule by which
// tofu-run's cuda backend places a process's workers on the GPUs it sees,
// kept apart from CUDA so that it is tested on the host.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/Error.h"

using namespace tofu::runtime;

std::vector<int>
tofu::runtime::placeWorkersOnGpus(unsigned workers,
                                  const std::vector<unsigned> &localWorkers,
                                  unsigned localRank, unsigned gpus) {
  if (gpus == 0)
    throw RuntimeError("no GPU to place workers on");
  std::vector<int> gpuOf(workers, -1);
  for (unsigned i = 0, e = localWorkers.size(); i != e; ++i)
    gpuOf.at(localWorkers[i]) = int((localRank + i) % gpus);
  return gpuOf;
}
