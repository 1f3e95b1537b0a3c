//===- KernelTimes.cpp - What each op's kernel took on a device -----------===//

#include "tofu/Runtime/KernelTimes.h"

#include <algorithm>

using namespace tofu::runtime;

const char *tofu::runtime::getKernelLibraryName(KernelLibrary library) {
  switch (library) {
  case KernelLibrary::Generated:
    return "generated";
  case KernelLibrary::CuBlas:
    return "cuBLAS";
  case KernelLibrary::CuDnn:
    return "cuDNN";
  }
  return "generated";
}

void KernelTimes::addRound(const std::vector<double> &roundSeconds,
                           const std::vector<unsigned> &roundLaunches,
                           const std::vector<KernelLibrary> &roundLibrary) {
  std::size_t n = std::max(seconds.size(), roundSeconds.size());
  seconds.resize(n, 0);
  launches.resize(n, 0);
  library.resize(n, KernelLibrary::Generated);
  for (std::size_t k = 0; k != roundSeconds.size(); ++k) {
    if (roundLaunches[k] == 0)
      continue;
    if (launches[k] == 0 || roundSeconds[k] < seconds[k]) {
      seconds[k] = roundSeconds[k];
      launches[k] = roundLaunches[k];
    }
    library[k] = roundLibrary[k];
  }
  ++rounds;
}
