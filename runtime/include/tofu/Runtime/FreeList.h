//===- FreeList.h - The pools' reuse rule -----------------------*- C++ -*-===//
//
// This file declares FreeList, the one rule by which a worker's pool reuses
// memory: a released buffer is kept under its capacity and serves a later
// request of `bytes` when its capacity is the smallest kept one of at least
// max(bytes, 1) and at most twice that; otherwise the request gets a new
// buffer of exactly max(bytes, 1). A pool's live bytes are the capacities
// of its live buffers. MemoryPool (host memory), DevicePool (a Device's)
// and the memory model that predicts their peaks (StepMemory.h) all reuse
// through it, so the prediction follows the same rule as the pools.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_FREELIST_H
#define TOFU_RUNTIME_FREELIST_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace tofu {
namespace runtime {

/// Released buffers (`Storage`: what a buffer's memory is, or an empty
/// struct where only sizes matter) with the live and peak byte counts of
/// the pool that owns them.
template <typename Storage> class FreeList {
public:
  /// The capacity a request of `bytes` is served with, and the storage to
  /// reuse; `reused` is false when the caller must obtain `capacity` new
  /// bytes. Counts the capacity as live.
  struct Grant {
    std::size_t capacity;
    bool reused;
    Storage storage;
  };
  Grant take(std::size_t bytes) {
    std::size_t want = bytes ? bytes : 1;
    Grant grant{want, false, Storage()};
    auto it = kept.lower_bound(want);
    if (it != kept.end() && it->first <= 2 * want) {
      grant = Grant{it->first, true, std::move(it->second)};
      kept.erase(it);
    }
    live += std::int64_t(grant.capacity);
    if (live > peak)
      peak = live;
    return grant;
  }
  /// Keeps a released buffer of `capacity` bytes for reuse.
  void put(std::size_t capacity, Storage storage) {
    live -= std::int64_t(capacity);
    kept.emplace(capacity, std::move(storage));
  }

  std::int64_t getLiveBytes() const { return live; }
  std::int64_t getPeakBytes() const { return peak; }
  /// Starts a new peak measurement at the live bytes.
  void resetPeak() { peak = live; }
  /// The kept buffers, smallest first.
  const std::multimap<std::size_t, Storage> &getKept() const { return kept; }
  std::multimap<std::size_t, Storage> &getKept() { return kept; }

private:
  std::multimap<std::size_t, Storage> kept;
  std::int64_t live = 0, peak = 0;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_FREELIST_H
