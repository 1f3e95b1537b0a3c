//===- Memory.h - Does the plan fit the machine's memory --------*- C++ -*-===//
//
// This file declares tofu-run's memory check: before it allocates anything
// (the inputs, the workers' pools), the plan's peak per worker times the
// workers this process runs, plus the graph inputs it draws, is compared
// with the memory available (MemAvailable of /proc/meminfo on the host;
// the GPU's free memory for --backend cuda), so that a plan larger than the
// machine is one error with the numbers and what would fit, not an abort
// (docs/Runtime.md, "Memory the machine lacks").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_MEMORY_H
#define TOFU_TOOLS_TOFU_RUN_MEMORY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace tofu {

/// MemAvailable of `meminfo` (the text of /proc/meminfo) in bytes, or None.
llvm::Optional<int64_t> parseMemAvailable(llvm::StringRef meminfo);

/// MemAvailable of this machine's /proc/meminfo in bytes, or None.
llvm::Optional<int64_t> getAvailableHostMemory();

/// What a run holds at once in the memory it is checked against.
struct MemoryNeed {
  /// The plan's peak bytes of each worker this process runs there.
  llvm::ArrayRef<int64_t> peaks;
  /// Bytes allocated once besides the workers', and what they are ("the
  /// graph's inputs").
  int64_t shared = 0;
  std::string sharedWhat;
};

/// "" if `need` fits in `available` bytes of `where` ("MemAvailable", "GPU
/// 0's free memory"), else the error: the numbers, and the peak per worker
/// that would fit (tofu-plan --peak-memory) or more workers.
std::string checkMemory(const MemoryNeed &need, int64_t available,
                        llvm::StringRef where);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_MEMORY_H
