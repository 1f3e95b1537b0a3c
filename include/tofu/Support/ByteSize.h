//===- ByteSize.h - Byte counts for people ----------------------*- C++ -*-===//
//
// This file declares the one way tools print a byte count: "512 B",
// "16.0 MiB", "25.23 GiB" (binary units, a chosen number of decimals).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_BYTESIZE_H
#define TOFU_SUPPORT_BYTESIZE_H

#include <cstdint>
#include <string>

namespace tofu {

/// `bytes` in the largest binary unit (B, KiB, ... PiB) that keeps the
/// number at least 1, with `decimals` decimals (none for plain bytes).
std::string formatByteSize(double bytes, unsigned decimals = 1);

} // namespace tofu

#endif // TOFU_SUPPORT_BYTESIZE_H
