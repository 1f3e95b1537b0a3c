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
  for (auto &entry : freeList)
    device.deallocate(worker, entry.second);
}

DeviceBuffer DevicePool::allocate(std::size_t bytes) {
  DeviceBuffer buffer;
  std::size_t want = bytes ? bytes : 1;
  auto it = freeList.lower_bound(want);
  if (it != freeList.end() && it->first <= 2 * want) {
    buffer.capacity = it->first;
    buffer.ptr = it->second;
    freeList.erase(it);
  } else {
    buffer.ptr = device.allocate(worker, want);
    buffer.capacity = want;
  }
  buffer.pool = this;
  buffer.bytes = bytes;
  live += buffer.capacity;
  if (live > peak)
    peak = live;
  return buffer;
}

void DevicePool::release(DeviceBuffer &buffer) {
  live -= buffer.capacity;
  freeList.emplace(buffer.capacity, buffer.ptr);
}
