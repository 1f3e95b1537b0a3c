//===- Memory.cpp - Does the plan fit the machine's memory ----------------===//
//
// This file implements tofu-run's memory check (Memory.h): reading
// MemAvailable and comparing a run's peak bytes with it.
//
//===----------------------------------------------------------------------===//

#include "Memory.h"

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace tofu;

llvm::Optional<int64_t> tofu::parseMemAvailable(llvm::StringRef meminfo) {
  // "MemAvailable:   24000000 kB"
  while (!meminfo.empty()) {
    llvm::StringRef line;
    std::tie(line, meminfo) = meminfo.split('\n');
    if (!line.consume_front("MemAvailable:"))
      continue;
    line = line.trim();
    if (!line.consume_back("kB"))
      return llvm::None;
    int64_t kib;
    if (line.trim().getAsInteger(10, kib) || kib < 0 ||
        kib > INT64_MAX / 1024)
      return llvm::None;
    return kib * 1024;
  }
  return llvm::None;
}

llvm::Optional<int64_t> tofu::getAvailableHostMemory() {
  // /proc files report size 0: read them as a stream.
  auto buffer = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo");
  if (!buffer)
    return llvm::None;
  return parseMemAvailable((*buffer)->getBuffer());
}

std::string tofu::checkMemory(const MemoryNeed &need, int64_t available,
                              llvm::StringRef where) {
  int64_t total = need.shared, most = 0;
  for (int64_t peak : need.peaks) {
    total = peak > INT64_MAX - total ? INT64_MAX : total + peak;
    most = std::max(most, peak);
  }
  if (total <= available)
    return "";
  size_t workers = need.peaks.size();
  std::string msg = "not enough memory: the plan's peak is up to " +
                    std::to_string(most) + " bytes per worker; " +
                    std::to_string(workers) +
                    (workers == 1 ? " worker" : " workers") +
                    " in this process";
  if (need.shared)
    msg += " and " + need.sharedWhat + " (" + std::to_string(need.shared) +
           " bytes)";
  msg += " need " + std::to_string(total) + " bytes, but " +
         std::to_string(available) + " are available (" + where.str() + ")";
  int64_t perWorker =
      workers ? (available - need.shared) / int64_t(workers) : 0;
  if (perWorker > 0)
    msg += "; it would fit with a peak of at most " +
           std::to_string(perWorker) +
           " bytes per worker (tofu-plan --peak-memory " +
           std::to_string(perWorker) + "), or with more workers";
  else
    msg += "; " + need.sharedWhat + " alone do not fit";
  return msg;
}
