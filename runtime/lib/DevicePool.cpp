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
  for (auto *entries : {&freeList.getKept(), &freeList.getSpare()})
    for (auto &entry : *entries)
      if (entry.second.held)
        device.deallocate(worker, entry.second.storage);
}

DeviceBuffer DevicePool::allocate(std::size_t bytes) {
  return makeBuffer(freeList.take(bytes), bytes);
}

DeviceBuffer DevicePool::allocateExact(std::size_t bytes) {
  return makeBuffer(freeList.takeExact(bytes), bytes);
}

void DevicePool::beginStep() {
  for (auto &entry : freeList.beginStep())
    if (entry.second.held)
      device.deallocate(worker, entry.second.storage);
}

DeviceBuffer DevicePool::makeBuffer(FreeList<void *>::Grant grant,
                                    std::size_t bytes) {
  DeviceBuffer buffer;
  buffer.ptr =
      grant.fresh ? device.allocate(worker, grant.capacity) : grant.storage;
  buffer.capacity = grant.capacity;
  buffer.pool = this;
  buffer.bytes = bytes;
  return buffer;
}

void DevicePool::release(DeviceBuffer &buffer) {
  freeList.put(buffer.capacity, buffer.ptr);
}
