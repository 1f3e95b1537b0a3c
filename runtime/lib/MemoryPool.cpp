//===- MemoryPool.cpp - One worker's buffers, reused by liveness ----------===//
//
// This file implements MemoryPool's best-fit free list and its byte counts.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/MemoryPool.h"

using namespace tofu::runtime;

Buffer &Buffer::operator=(Buffer &&other) noexcept {
  if (this != &other) {
    reset();
    pool = other.pool;
    storage = std::move(other.storage);
    bytes = other.bytes;
    capacity = other.capacity;
    other.pool = nullptr;
  }
  return *this;
}

void Buffer::reset() {
  if (pool)
    pool->release(*this);
  pool = nullptr;
}

Buffer MemoryPool::allocate(std::size_t bytes) {
  Buffer buffer;
  buffer.pool = this;
  buffer.bytes = bytes;
  auto it = freeList.lower_bound(bytes);
  if (it != freeList.end() && it->first <= 2 * bytes) {
    buffer.capacity = it->first;
    buffer.storage = std::move(it->second);
    freeList.erase(it);
  } else {
    buffer.capacity = bytes;
    buffer.storage.reset(new unsigned char[bytes ? bytes : 1]);
    reserved += bytes;
  }
  live += buffer.capacity;
  if (live > peak)
    peak = live;
  return buffer;
}

void MemoryPool::release(Buffer &buffer) {
  live -= buffer.capacity;
  freeList.emplace(buffer.capacity, std::move(buffer.storage));
}
