//===- FreeList.h - The pools' reuse rule -----------------------*- C++ -*-===//
//
// This file declares FreeList, the one rule by which a worker's pool reuses
// memory: a released buffer is kept under its capacity and serves a later
// request of `bytes` when its capacity is the smallest kept one of at least
// max(bytes, 1) and at most maxReuseCapacity of that (1.5 times it);
// otherwise the request gets a buffer of exactly max(bytes, 1). A pool's
// live bytes are the capacities of its live buffers. MemoryPool (host
// memory), DevicePool (a Device's) and the memory model that predicts
// their peaks (StepMemory.h, through SizeFreeList below: the same rule over
// sizes alone) all reuse through it, so the prediction follows the same
// rule as the pools.
//
// Every step reuses as the first one did: when a step begins, the buffers
// kept from the last one become spares, which serve only a request of
// exactly their capacity where the step would otherwise get a new buffer.
// The kept buffers a step starts with are then those it released itself,
// as in the first step, so each step's capacities, and its peak, are the
// first step's (reused freely, a later step's requests found the larger
// buffers of the step before: ResNet-18's second step peaked 2.7% above
// its first).
//
// A pool holds its live buffers and the memory of its kept buffers and
// spares. With trimming on (setTrimming; tofu-run --trim-pools), so that
// what it holds never exceeds the most its live buffers ever held (the
// peak a plan predicts), a request that needs new memory first trims: it frees the memory of kept buffers and spares until live
// plus held-free bytes are within that most. A trimmed buffer stays in
// the free list under its capacity and serves requests as before (its
// memory obtained again), so trimming changes no capacity a request is
// granted, and no peak. It is off by default: a trimmed buffer's memory
// is obtained again in every step (the bundled MLP's 16 MB weight
// gradient: 17 -> 27 ms a step at K = 1, docs/Runtime.md "Memory").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_FREELIST_H
#define TOFU_RUNTIME_FREELIST_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

namespace tofu {
namespace runtime {

/// The largest kept capacity that may serve a request of `want` (>= 1)
/// bytes: one and a half times it. This is the one reuse bound of every
/// pool (FreeList) and of the peak prediction (SizeFreeList). A looser
/// bound (twice the request, the rule before) let a worker's requests land
/// in buffers up to 2x their size, and which buffers they landed in
/// depended on the sizes it released before, so workers with slightly
/// different parts peaked apart (GPT-3 at 1,000 workers: fullest 1.105x
/// the mean). Every planned peak of docs/Planner.md's benchmark set is at
/// most what it was with twice; the free buffers a pool keeps can be more
/// (docs/Runtime.md, "Memory").
inline std::size_t maxReuseCapacity(std::size_t want) {
  return want + want / 2;
}

/// Released buffers (`Storage`: what a buffer's memory is, or an empty
/// struct where only sizes matter) with the live, peak and held byte counts
/// of the pool that owns them.
template <typename Storage> class FreeList {
public:
  /// Frees the memory of a trimmed buffer (by default, by destroying its
  /// storage: a unique_ptr's memory).
  using Release = std::function<void(Storage &)>;
  explicit FreeList(Release release = {}) : release(std::move(release)) {}
  /// Whether a request that needs new memory first trims (above).
  void setTrimming(bool on) { trimming = on; }

  /// A kept buffer or spare; `held` is false once trimmed (its memory
  /// freed, to be obtained again when a request takes it).
  struct Entry {
    Storage storage;
    bool held = true;
  };
  /// The capacity a request of `bytes` is served with, and the storage to
  /// reuse; `reused` is true when the capacity is a kept buffer's or a
  /// spare's, `fresh` when the caller must obtain `capacity` new bytes (a
  /// new buffer, or a trimmed one). Counts the capacity as live.
  struct Grant {
    std::size_t capacity;
    bool reused;
    Storage storage;
    bool fresh;
  };
  Grant take(std::size_t bytes) {
    std::size_t want = bytes ? bytes : 1;
    auto it = kept.lower_bound(want);
    if (it == kept.end() || it->first > maxReuseCapacity(want))
      return takeExact(want);
    return grant(kept, it);
  }
  /// Whether requests of `first`, each taken and put back before the next,
  /// and the same requests in the order `second` are granted the same
  /// largest capacity and leave the same kept buffers and spares (by
  /// capacity): then either order gives the owner the same peak and the
  /// same pool from then on (the executor's sends first, docs/Runtime.md,
  /// "Overlap"). Only the buffers a request could take are replayed: kept
  /// ones of capacity in [want, maxReuseCapacity(want)] and spares of
  /// exactly want, for each request's want = max(bytes, 1); the rest are
  /// left alone in either order. So the cost grows with the requests and
  /// the buffers in their ranges, not with the pool.
  bool sameInEitherOrder(const std::vector<std::size_t> &first,
                         const std::vector<std::size_t> &second) const {
    std::vector<std::size_t> wants;
    for (const auto *list : {&first, &second})
      for (std::size_t bytes : *list)
        wants.push_back(bytes ? bytes : 1);
    std::sort(wants.begin(), wants.end());
    wants.erase(std::unique(wants.begin(), wants.end()), wants.end());
    // Sorted capacities of the kept buffers in the ranges (each once,
    // though ranges overlap) and of the spares of the wanted sizes.
    std::vector<std::size_t> keptA, spareA;
    std::size_t from = 0;
    for (std::size_t want : wants) {
      std::size_t lo = std::max(want, from), hi = maxReuseCapacity(want);
      for (auto it = kept.lower_bound(lo); it != kept.end() && it->first <= hi;
           ++it)
        keptA.push_back(it->first);
      from = hi + 1;
      for (auto [it, end] = spare.equal_range(want); it != end; ++it)
        spareA.push_back(want);
    }
    std::vector<std::size_t> keptB = keptA, spareB = spareA;
    return replay(first, keptA, spareA) == replay(second, keptB, spareB) &&
           keptA == keptB && spareA == spareB;
  }
  /// A buffer of exactly max(bytes, 1): a spare of that capacity, or new.
  /// (The executors' next values of parameters, so that a parameter holds
  /// the same capacity in every step.)
  Grant takeExact(std::size_t bytes) {
    std::size_t want = bytes ? bytes : 1;
    auto it = spare.find(want);
    if (it != spare.end())
      return grant(spare, it);
    count(want);
    trim();
    return Grant{want, false, Storage(), true};
  }
  /// Keeps a released buffer of `capacity` bytes for reuse.
  void put(std::size_t capacity, Storage storage) {
    live -= std::int64_t(capacity);
    kept.emplace(capacity, Entry{std::move(storage), true});
    cached += std::int64_t(capacity);
  }
  /// Begins a step: the kept buffers become the spares. Returns the spares
  /// of the step before that no request took, for the owner to free (those
  /// still `held`).
  std::multimap<std::size_t, Entry> beginStep() {
    std::multimap<std::size_t, Entry> unused = std::move(spare);
    for (const auto &entry : unused)
      if (entry.second.held)
        cached -= std::int64_t(entry.first);
    spare = std::move(kept);
    kept.clear();
    return unused;
  }

  std::int64_t getLiveBytes() const { return live; }
  std::int64_t getPeakBytes() const { return peak; }
  /// Bytes whose memory the pool holds: live buffers and the kept buffers
  /// and spares not trimmed. With trimming, never more than the most live
  /// bytes so far.
  std::int64_t getHeldBytes() const { return live + cached; }
  /// The most getHeldBytes since the last resetPeak.
  std::int64_t getPeakHeldBytes() const { return peakHeld; }
  /// Starts a new peak measurement (live and held) at the current bytes.
  void resetPeak() {
    peak = live;
    peakHeld = live + cached;
  }
  /// The kept buffers, smallest first.
  const std::multimap<std::size_t, Entry> &getKept() const { return kept; }
  std::multimap<std::size_t, Entry> &getKept() { return kept; }
  /// The spares, smallest first.
  std::multimap<std::size_t, Entry> &getSpare() { return spare; }

private:
  /// Serves a request with the buffer at `it` of `from` (kept or spare).
  Grant grant(std::multimap<std::size_t, Entry> &from,
              typename std::multimap<std::size_t, Entry>::iterator it) {
    Grant grant{it->first, true, std::move(it->second.storage),
                !it->second.held};
    if (it->second.held)
      cached -= std::int64_t(it->first);
    from.erase(it);
    count(grant.capacity);
    if (grant.fresh)
      trim();
    return grant;
  }
  void count(std::size_t capacity) {
    live += std::int64_t(capacity);
    peak = std::max(peak, live);
    mostLive = std::max(mostLive, live);
  }
  /// Before new memory is obtained: frees kept buffers' and spares' memory
  /// until the held bytes are at most the most live bytes so far. Each time
  /// the smallest held buffer that covers the excess, else the largest
  /// (fewest frees), a spare before a kept buffer of the same capacity.
  void trim() {
    while (trimming && live + cached > mostLive) {
      std::size_t excess = std::size_t(live + cached - mostLive);
      auto pick = [&](std::multimap<std::size_t, Entry> &entries) {
        auto it = entries.lower_bound(excess);
        while (it != entries.end() && !it->second.held)
          ++it;
        if (it != entries.end())
          return it;
        for (auto back = entries.rbegin(); back != entries.rend(); ++back)
          if (back->second.held)
            return std::prev(back.base());
        return entries.end();
      };
      auto s = pick(spare), k = pick(kept);
      // Whether capacity a is freed before b.
      auto before = [&](std::size_t a, std::size_t b) {
        if ((a >= excess) != (b >= excess))
          return a >= excess;
        return a >= excess ? a <= b : a >= b;
      };
      bool fromSpare = k == kept.end() ||
                       (s != spare.end() && before(s->first, k->first));
      auto it = fromSpare ? s : k;
      if (release)
        release(it->second.storage);
      else
        it->second.storage = Storage();
      it->second.held = false;
      cached -= std::int64_t(it->first);
    }
    peakHeld = std::max(peakHeld, live + cached);
  }
  /// take and put of each of `sizes` in turn over capacities alone (each
  /// list sorted); returns the largest capacity granted.
  static std::size_t replay(const std::vector<std::size_t> &sizes,
                            std::vector<std::size_t> &kept,
                            std::vector<std::size_t> &spare) {
    std::size_t largest = 0;
    for (std::size_t bytes : sizes) {
      std::size_t want = bytes ? bytes : 1, capacity = want;
      auto it = std::lower_bound(kept.begin(), kept.end(), want);
      if (it != kept.end() && *it <= maxReuseCapacity(want)) {
        capacity = *it;
        kept.erase(it);
      } else if (auto s = std::lower_bound(spare.begin(), spare.end(), want);
                 s != spare.end() && *s == want) {
        spare.erase(s);
      }
      largest = std::max(largest, capacity);
      kept.insert(std::upper_bound(kept.begin(), kept.end(), capacity),
                  capacity);
    }
    return largest;
  }

  std::multimap<std::size_t, Entry> kept, spare;
  Release release;
  bool trimming = false;
  /// Bytes of the kept buffers and spares still held.
  std::int64_t cached = 0;
  std::int64_t live = 0, peak = 0, mostLive = 0, peakHeld = 0;
};

/// FreeList's rule over sizes alone, for the peak prediction (StepMemory.h),
/// which replays thousands of workers' pools: the kept buffers and the
/// spares are sorted arrays of (capacity, count) instead of trees, so a
/// request is a binary search in one small block of memory. It grants the
/// capacities FreeList grants for the same calls (FreeListTest compares
/// them on random sequences).
class SizeFreeList {
public:
  /// The capacity a request of `bytes` is served with (FreeList::take).
  std::size_t take(std::size_t bytes) {
    std::size_t want = bytes ? bytes : 1;
    auto it = lowerBound(kept, want);
    if (it == kept.end() || it->first > maxReuseCapacity(want))
      return takeExact(want);
    std::size_t capacity = it->first;
    remove(kept, it);
    count(capacity);
    return capacity;
  }
  /// Exactly max(bytes, 1), a spare of that capacity if any
  /// (FreeList::takeExact).
  std::size_t takeExact(std::size_t bytes) {
    std::size_t want = bytes ? bytes : 1;
    auto it = lowerBound(spare, want);
    if (it != spare.end() && it->first == want)
      remove(spare, it);
    count(want);
    return want;
  }
  /// Keeps a released buffer of `capacity` bytes (FreeList::put).
  void put(std::size_t capacity) {
    live -= std::int64_t(capacity);
    auto it = lowerBound(kept, capacity);
    if (it != kept.end() && it->first == capacity)
      ++it->second;
    else
      kept.insert(it, {capacity, 1});
  }
  /// The kept buffers become the spares (FreeList::beginStep).
  void beginStep() {
    spare.swap(kept);
    kept.clear();
  }
  std::int64_t getLiveBytes() const { return live; }
  std::int64_t getPeakBytes() const { return peak; }
  void resetPeak() { peak = live; }

private:
  using Sizes = std::vector<std::pair<std::size_t, std::size_t>>;
  static Sizes::iterator lowerBound(Sizes &sizes, std::size_t bytes) {
    return std::lower_bound(
        sizes.begin(), sizes.end(), bytes,
        [](const auto &entry, std::size_t b) { return entry.first < b; });
  }
  static void remove(Sizes &sizes, Sizes::iterator it) {
    if (--it->second == 0)
      sizes.erase(it);
  }
  void count(std::size_t capacity) {
    live += std::int64_t(capacity);
    if (live > peak)
      peak = live;
  }

  /// Capacities, increasing, each with how many buffers have it.
  Sizes kept, spare;
  std::int64_t live = 0, peak = 0;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_FREELIST_H
