//===- DevicePool.h - One worker's device buffers, reused -------*- C++ -*-===//
//
// This file declares DevicePool, MemoryPool's policy over a Device's
// memory: a released buffer goes to a free list and serves a later request
// it fits (FreeList.h: best fit, at most 1.5 times the request); the pool counts the
// capacity its live buffers hold and their peak (the device executor's
// peak_bytes_per_worker). Free-listed memory is returned to the device
// when the pool is destroyed, after the device synchronized, when a step
// begins (the spares no request took) and when the pool trims to stay
// within its most live bytes (FreeList.h); the device's deallocate orders a
// free after the work queued before it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICEPOOL_H
#define TOFU_RUNTIME_DEVICEPOOL_H

#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/FreeList.h"

namespace tofu {
namespace runtime {

class DevicePool;

/// A buffer of a DevicePool; returns itself to the pool when destroyed.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  ~DeviceBuffer() { reset(); }

  /// The device address (null when empty).
  unsigned char *data() const { return static_cast<unsigned char *>(ptr); }
  std::size_t size() const { return bytes; }
  explicit operator bool() const { return pool != nullptr; }
  void reset();

private:
  friend class DevicePool;
  DevicePool *pool = nullptr;
  void *ptr = nullptr;
  std::size_t bytes = 0, capacity = 0;
};

/// Worker `worker`'s buffers on `device`.
class DevicePool {
public:
  DevicePool(Device &device, unsigned worker)
      : device(device), worker(worker), freeList([this](void *&ptr) {
          this->device.deallocate(this->worker, ptr);
          ptr = nullptr;
        }) {}
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;
  /// Returns the free-listed memory to the device (live buffers must be
  /// gone).
  ~DevicePool();

  DeviceBuffer allocate(std::size_t bytes);
  /// A buffer of exactly `bytes` bytes (FreeList::takeExact).
  DeviceBuffer allocateExact(std::size_t bytes);
  /// Begins a step (FreeList::beginStep), freeing the spares the last step
  /// did not use.
  void beginStep();
  std::int64_t getLiveBytes() const { return freeList.getLiveBytes(); }
  std::int64_t getPeakBytes() const { return freeList.getPeakBytes(); }
  void resetPeak() { freeList.resetPeak(); }
  /// FreeList::setTrimming.
  void setTrimming(bool on) { freeList.setTrimming(on); }
  /// MemoryPool::getHeldBytes, getPeakHeldBytes.
  std::int64_t getHeldBytes() const { return freeList.getHeldBytes(); }
  std::int64_t getPeakHeldBytes() const { return freeList.getPeakHeldBytes(); }

private:
  friend class DeviceBuffer;
  DeviceBuffer makeBuffer(FreeList<void *>::Grant grant, std::size_t bytes);
  void release(DeviceBuffer &buffer);

  Device &device;
  unsigned worker;
  FreeList<void *> freeList;
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICEPOOL_H
