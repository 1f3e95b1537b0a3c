//===- HostDevice.cpp - The device executor's host emulation --------------===//
//
// This file implements the host emulation of Device and Communicator
// (Device.h): a worker's memory is host memory (with an optional capacity,
// so running out behaves as on a device), its stream runs each piece of
// work when it is enqueued, kernels are a KernelProvider's, box copies and
// reductions are Box.h's, and a group of transfers is a memcpy each. The
// device executor's unit tests and `tofu-run --backend cuda-host` run on
// it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"

#include <cstring>
#include <map>

using namespace tofu::runtime;

Device::~Device() = default;
Communicator::~Communicator() = default;

namespace {
class HostDevice : public Device {
public:
  HostDevice(unsigned workers, KernelProvider &kernels, std::size_t capacity)
      : kernels(kernels), capacity(capacity), memories(workers) {}
  ~HostDevice() override {
    for (Memory &memory : memories)
      for (auto &entry : memory.blocks)
        delete[] static_cast<unsigned char *>(entry.first);
  }

  unsigned getNumWorkers() const override { return memories.size(); }

  void *allocate(unsigned worker, std::size_t bytes) override {
    Memory &memory = memories.at(worker);
    if (capacity && memory.used + bytes > capacity)
      throw RuntimeError("worker " + std::to_string(worker) +
                         ": out of device memory allocating " +
                         std::to_string(bytes) + " bytes (" +
                         std::to_string(memory.used) + " of " +
                         std::to_string(capacity) + " in use)");
    void *data = new unsigned char[bytes];
    memory.blocks[data] = bytes;
    memory.used += bytes;
    return data;
  }

  void deallocate(unsigned worker, void *data) override {
    Memory &memory = memories.at(worker);
    auto it = memory.blocks.find(data);
    if (it == memory.blocks.end())
      throw RuntimeError("worker " + std::to_string(worker) +
                         ": freeing memory it does not own");
    memory.used -= it->second;
    delete[] static_cast<unsigned char *>(data);
    memory.blocks.erase(it);
  }

  void upload(unsigned worker, void *dst, const void *src,
              std::size_t bytes) override {
    check(worker, dst, bytes);
    std::memcpy(dst, src, bytes);
  }
  void download(unsigned worker, void *dst, const void *src,
                std::size_t bytes) override {
    check(worker, src, bytes);
    std::memcpy(dst, src, bytes);
  }

  void copyRegion(unsigned worker, const Box &region, const void *src,
                  const Box &srcBox, void *dst, const Box &dstBox,
                  unsigned elementSize) override {
    check(worker, src, srcBox.getVolume() * elementSize);
    check(worker, dst, dstBox.getVolume() * elementSize);
    tofu::runtime::copyRegion(region, src, srcBox, dst, dstBox, elementSize);
  }

  void reduceRegion(unsigned worker, Reducer reducer, ElementType type,
                    const Box &region, const void *src, void *dst,
                    const Box &dstBox) override {
    check(worker, src, region.getVolume() * getElementSize(type));
    check(worker, dst, dstBox.getVolume() * getElementSize(type));
    tofu::runtime::reduceRegion(reducer, type, region, src, dst, dstBox);
  }

  void launch(unsigned worker, unsigned kernel,
              const KernelCall &call) override {
    for (unsigned p = 0; p != call.numInputs; ++p)
      check(worker, call.inputs[p].data, 0);
    check(worker, call.output.data, 0);
    kernels.run(kernel, call);
  }

  void synchronize() override {}

  /// Throws unless [data, data + bytes) lies in one of the worker's
  /// blocks: the emulation catches a buffer of the wrong worker, which on
  /// a device would be an illegal address.
  void check(unsigned worker, const void *data, std::size_t bytes) const {
    const auto &blocks = memories.at(worker).blocks;
    auto it = blocks.upper_bound(const_cast<void *>(data));
    if (it != blocks.begin()) {
      --it;
      auto *base = static_cast<const unsigned char *>(it->first);
      auto *at = static_cast<const unsigned char *>(data);
      if (at >= base && at + bytes <= base + it->second)
        return;
    }
    throw RuntimeError("worker " + std::to_string(worker) +
                       ": an address outside its memory");
  }

private:
  struct Memory {
    std::map<void *, std::size_t> blocks;
    std::size_t used = 0;
  };
  KernelProvider &kernels;
  std::size_t capacity;
  std::vector<Memory> memories;
};

class HostCommunicator : public Communicator {
public:
  explicit HostCommunicator(HostDevice &device) : device(device) {}
  void exchange(const std::vector<Transfer> &group) override {
    for (const Transfer &t : group) {
      if (t.src == t.dst)
        throw RuntimeError("a transfer from worker " + std::to_string(t.src) +
                           " to itself");
      device.check(t.src, t.from, t.bytes);
      device.check(t.dst, t.to, t.bytes);
      std::memcpy(t.to, t.from, t.bytes);
      moved += t.bytes;
    }
  }

private:
  HostDevice &device;
};
} // namespace

std::unique_ptr<Device>
tofu::runtime::createHostDevice(unsigned workers, KernelProvider &kernels,
                                std::size_t capacityBytes) {
  return std::make_unique<HostDevice>(workers, kernels, capacityBytes);
}

std::unique_ptr<Communicator>
tofu::runtime::createHostCommunicator(Device &device) {
  auto *host = dynamic_cast<HostDevice *>(&device);
  if (!host)
    throw RuntimeError("the host communicator needs the host device");
  return std::make_unique<HostCommunicator>(*host);
}
