//===- BoxStrides.h - Element strides of a dense 4-D box --------*- C++ -*-===//
//
// This file defines the row-major element strides of a 4-D BoxView, shared
// by the planners of the cuDNN calls (DeviceConv.cpp, DevicePooling.cpp),
// which describe NCHW boxes to cuDNN by dims and strides.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_LIB_BOXSTRIDES_H
#define TOFU_RUNTIME_LIB_BOXSTRIDES_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>

namespace tofu {
namespace runtime {

/// Row-major element strides of the 4-D box `v`.
inline void getStrides4(const BoxView &v, std::int64_t strides[4]) {
  strides[3] = 1;
  for (int d = 2; d >= 0; --d)
    strides[d] = strides[d + 1] * v.extent[d + 1];
}

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_LIB_BOXSTRIDES_H
