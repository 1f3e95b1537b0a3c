//===- MemoryPool.h - One worker's buffers, reused by liveness --*- C++ -*-===//
//
// This file declares MemoryPool, where a worker allocates its stored
// tensors and its per-op buffers. A released buffer goes to a free list and
// serves a later request of a size it fits (FreeList.h: best fit, at most
// 1.5 times the request), so tensors whose lifetimes do not overlap share
// memory. The pool counts the capacities its live buffers hold and their
// peak: the measured peak_bytes_per_worker of `tofu-run --report`. It frees
// free buffers' memory so that what it holds stays within the most its live
// buffers held (held_bytes_per_worker).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_MEMORYPOOL_H
#define TOFU_RUNTIME_MEMORYPOOL_H

#include "tofu/Runtime/FreeList.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tofu {
namespace runtime {

class MemoryPool;

/// A buffer of a pool; returns itself to the pool when destroyed.
class Buffer {
public:
  Buffer() = default;
  Buffer(Buffer &&other) noexcept { *this = std::move(other); }
  Buffer &operator=(Buffer &&other) noexcept;
  ~Buffer() { reset(); }

  unsigned char *data() const { return storage.get(); }
  /// Bytes requested.
  std::size_t size() const { return bytes; }
  /// Bytes the pool counts for it (at least size()).
  std::size_t capacity() const { return cap; }
  explicit operator bool() const { return pool != nullptr; }
  /// Returns the buffer to its pool.
  void reset();

private:
  friend class MemoryPool;
  MemoryPool *pool = nullptr;
  std::unique_ptr<unsigned char[]> storage;
  std::size_t bytes = 0, cap = 0;
};

/// A free list of buffers with live and peak byte counts.
class MemoryPool {
public:
  MemoryPool() = default;
  MemoryPool(const MemoryPool &) = delete;
  MemoryPool &operator=(const MemoryPool &) = delete;

  /// A buffer of at least `bytes` bytes (contents unspecified).
  Buffer allocate(std::size_t bytes);
  /// A buffer of exactly `bytes` bytes (FreeList::takeExact).
  Buffer allocateExact(std::size_t bytes);
  /// FreeList::setTrimming.
  void setTrimming(bool on) { freeList.setTrimming(on); }
  /// FreeList::sameInEitherOrder.
  bool sameInEitherOrder(const std::vector<std::size_t> &first,
                         const std::vector<std::size_t> &second) const {
    return freeList.sameInEitherOrder(first, second);
  }
  /// Begins a step (FreeList::beginStep), freeing the spares the last step
  /// did not use.
  void beginStep();
  /// Bytes held by live buffers (their capacities).
  std::int64_t getLiveBytes() const { return freeList.getLiveBytes(); }
  std::int64_t getPeakBytes() const { return freeList.getPeakBytes(); }
  /// Starts a new peak measurement at the live (and held) bytes.
  void resetPeak() { freeList.resetPeak(); }
  /// Bytes whose memory the pool holds, live or free (FreeList::getHeldBytes:
  /// never more than the most live bytes so far), and their most since the
  /// last resetPeak.
  std::int64_t getHeldBytes() const { return freeList.getHeldBytes(); }
  std::int64_t getPeakHeldBytes() const { return freeList.getPeakHeldBytes(); }

private:
  friend class Buffer;
  using Grant = FreeList<std::unique_ptr<unsigned char[]>>::Grant;
  Buffer makeBuffer(Grant grant, std::size_t bytes);
  void release(Buffer &buffer);

  FreeList<std::unique_ptr<unsigned char[]>> freeList;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_MEMORYPOOL_H
