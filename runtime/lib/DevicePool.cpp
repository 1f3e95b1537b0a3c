//===- DevicePool.cpp - One worker's device buffers, reused ---------------===//
//
// This file implements DevicePool's best-fit free list over a Device.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DevicePool.h"

using namespace tofu::runtime;

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    reset();
    pool = other.pool;
    ptr = other.ptr;
    bytes = other.bytes;
    capacity = other.capacity;
    other.pool = nullptr;
    other.ptr = nullptr;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (pool)
    pool->release(*this);
  pool = nullptr;
  ptr = nullptr;
}

DevicePool::~DevicePool() {
  for (auto &entry : freeList.getKept())
    device.deallocate(worker, entry.second);
  for (auto &entry : freeList.getSpare())
    device.deallocate(worker, entry.second);
}

DeviceBuffer DevicePool::allocate(std::size_t bytes) {
  return makeBuffer(freeList.take(bytes), bytes);
}

DeviceBuffer DevicePool::allocateExact(std::size_t bytes) {
  return makeBuffer(freeList.takeExact(bytes), bytes);
}

void DevicePool::beginStep() {
  for (auto &entry : freeList.beginStep())
    device.deallocate(worker, entry.second);
}

DeviceBuffer DevicePool::makeBuffer(FreeList<void *>::Grant grant,
                                    std::size_t bytes) {
  DeviceBuffer buffer;
  buffer.ptr = grant.reused ? grant.storage
                            : device.allocate(worker, grant.capacity);
  buffer.capacity = grant.capacity;
  buffer.pool = this;
  buffer.bytes = bytes;
  return buffer;
}

void DevicePool::release(DeviceBuffer &buffer) {
  freeList.put(buffer.capacity, buffer.ptr);
}
