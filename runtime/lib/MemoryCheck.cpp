//===- MemoryCheck.cpp - Does a plan fit the machine's memory -------------===//
//
// This file implements the memory check (MemoryCheck.h): reading
// MemAvailable and comparing a run's peak bytes with it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/MemoryCheck.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

using namespace tofu::runtime;
using std::int64_t;

std::optional<int64_t>
tofu::runtime::parseMemAvailable(const std::string &meminfo) {
  // "MemAvailable:   24000000 kB"
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);) {
    const std::string key = "MemAvailable:";
    if (line.compare(0, key.size(), key) != 0)
      continue;
    std::istringstream fields(line.substr(key.size()));
    long long kib;
    std::string unit, rest;
    if (!(fields >> kib >> unit) || unit != "kB" || (fields >> rest) ||
        kib < 0 || kib > INT64_MAX / 1024)
      return std::nullopt;
    return int64_t(kib) * 1024;
  }
  return std::nullopt;
}

std::optional<int64_t> tofu::runtime::getAvailableHostMemory() {
  // /proc files report size 0: read them as a stream.
  std::ifstream in("/proc/meminfo");
  if (!in)
    return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return parseMemAvailable(text.str());
}

std::string tofu::runtime::checkMemory(const MemoryNeed &need,
                                      int64_t available,
                                      const std::string &where) {
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
         std::to_string(available) + " are available (" + where + ")";
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
