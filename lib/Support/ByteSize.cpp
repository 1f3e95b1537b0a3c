//===- ByteSize.cpp - Byte counts for people ------------------------------===//
//
// This file implements formatByteSize.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/ByteSize.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <iterator>

std::string tofu::formatByteSize(double bytes, unsigned decimals) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  unsigned u = 0;
  while (bytes >= 1024 && u + 1 < std::size(units)) {
    bytes /= 1024;
    ++u;
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  if (u == 0)
    os << int64_t(bytes) << " B";
  else
    os << llvm::format("%.*f ", int(decimals), bytes) << units[u];
  return os.str();
}
