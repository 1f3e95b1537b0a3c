//===- KernelProvider.cpp - Where the executors' kernels come from --------===//
//
// This file implements KernelTable (KernelProvider.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/KernelProvider.h"
#include "tofu/Runtime/Error.h"

#include <fmt/format.h>

using namespace tofu::runtime;

KernelProvider::~KernelProvider() = default;

void KernelTable::run(unsigned kernel, const KernelCall &call) {
  if (kernel >= kernels.size() || !kernels[kernel].fn)
    throw RuntimeError(fmt::format("no kernel {}", kernel));
  kernels[kernel].fn(call);
}
