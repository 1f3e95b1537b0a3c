//===- MemoryCheck.h - Does a plan fit the machine's memory -----*- C++ -*-===//
//
// This file declares the check tofu-run and LinkedPlan make before they
// allocate anything: the plan's peak per worker times the workers this
// process runs, plus what else it allocates once (tofu-run's drawn inputs),
// against the memory available (MemAvailable of /proc/meminfo on the host;
// the GPU's free memory on a device), so that a plan larger than the
// machine is one error with the numbers and what would fit, not an abort
// (docs/Runtime.md, "Memory the machine lacks").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_MEMORYCHECK_H
#define TOFU_RUNTIME_MEMORYCHECK_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// MemAvailable of `meminfo` (the text of /proc/meminfo) in bytes, or none.
std::optional<std::int64_t> parseMemAvailable(const std::string &meminfo);

/// MemAvailable of this machine's /proc/meminfo in bytes, or none.
std::optional<std::int64_t> getAvailableHostMemory();

/// What a run holds at once in the memory it is checked against.
struct MemoryNeed {
  /// The plan's peak bytes of each worker this process runs there.
  std::vector<std::int64_t> peaks;
  /// Bytes allocated once besides the workers', and what they are ("the
  /// graph's inputs").
  std::int64_t shared = 0;
  std::string sharedWhat;
};

/// "" if `need` fits in `available` bytes of `where` ("MemAvailable", "the
/// GPU's free memory"), else the error: the numbers, and the peak per
/// worker that would fit (tofu-plan --peak-memory) or more workers.
std::string checkMemory(const MemoryNeed &need, std::int64_t available,
                        const std::string &where);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_MEMORYCHECK_H
