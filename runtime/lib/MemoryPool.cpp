//===- MemoryPool.cpp - One worker's buffers, reused by liveness ----------===//
//
// This file implements MemoryPool's best-fit free list and its byte counts.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/MemoryPool.h"
#include "tofu/Runtime/Error.h"

#include <new>
#include <string>

using namespace tofu::runtime;

Buffer &Buffer::operator=(Buffer &&other) noexcept {
  if (this != &other) {
    reset();
    pool = other.pool;
    storage = std::move(other.storage);
    bytes = other.bytes;
    cap = other.cap;
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
  return makeBuffer(freeList.take(bytes), bytes);
}

Buffer MemoryPool::allocateExact(std::size_t bytes) {
  return makeBuffer(freeList.takeExact(bytes), bytes);
}

void MemoryPool::beginStep() { freeList.beginStep(); }

Buffer MemoryPool::makeBuffer(Grant grant, std::size_t bytes) {
  Buffer buffer;
  buffer.pool = this;
  buffer.bytes = bytes;
  buffer.cap = grant.capacity;
  if (grant.fresh) {
    // A RuntimeError, which every step's caller reports, instead of an
    // abort (tofu-run turns off LLVM's out-of-memory handler).
    try {
      buffer.storage.reset(new unsigned char[grant.capacity]);
    } catch (const std::bad_alloc &) {
      buffer.pool = nullptr;
      throw RuntimeError("out of memory: cannot allocate a buffer of " +
                         std::to_string(grant.capacity) + " bytes");
    }
  } else
    buffer.storage = std::move(grant.storage);
  return buffer;
}

void MemoryPool::release(Buffer &buffer) {
  freeList.put(buffer.cap, std::move(buffer.storage));
}
