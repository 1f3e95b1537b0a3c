//===- HostDevice.cpp - The device executor's host emulation --------------===//
//
// This file implements the host emulation of Device and Communicator
// (Device.h): a worker's memory is host memory (with an optional capacity,
// so running out behaves as on a device), its stream runs each piece of
// work when it is enqueued, kernels are a KernelProvider's, box copies and
// reductions are Box.h's, and a group of transfers is a memcpy each. A
// process may hold only some of the workers (one per MPI rank): transfers
// to or from another process's workers then go through a Transport, under
// tags numbering the groups. The device executor's unit tests and
// `tofu-run --backend cuda-host` (with `--transport mpi` under mpirun) run
// on it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Device.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/KernelProvider.h"
#include "tofu/Runtime/Transport.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

using namespace tofu::runtime;

Device::~Device() = default;
Communicator::~Communicator() = default;

namespace {
class HostDevice : public Device {
public:
  HostDevice(unsigned workers, KernelProvider &kernels, std::size_t capacity,
             const std::vector<unsigned> &local)
      : kernels(kernels), capacity(capacity), memories(workers),
        localWorkers(workers, local.empty()) {
    for (unsigned w : local)
      localWorkers.at(w) = true;
  }
  ~HostDevice() override {
    for (Memory &memory : memories)
      for (auto &entry : memory.blocks)
        delete[] static_cast<unsigned char *>(entry.first);
  }

  unsigned getNumWorkers() const override { return memories.size(); }
  /// Whether this process holds worker `worker`'s memory.
  bool isLocal(unsigned worker) const { return localWorkers.at(worker); }

  void *allocate(unsigned worker, std::size_t bytes) override {
    if (!isLocal(worker))
      throw RuntimeError(
          fmt::format("worker {}: runs in another process", worker));
    Memory &memory = memories.at(worker);
    if (capacity && memory.used + bytes > capacity)
      throw RuntimeError(fmt::format("worker {}: out of device memory "
                                     "allocating {} bytes ({} of {} in use)",
                                     worker, bytes, memory.used, capacity));
    void *data = new unsigned char[bytes];
    memory.blocks[data] = bytes;
    memory.used += bytes;
    return data;
  }

  void deallocate(unsigned worker, void *data) override {
    Memory &memory = memories.at(worker);
    auto it = memory.blocks.find(data);
    if (it == memory.blocks.end())
      throw RuntimeError(
          fmt::format("worker {}: freeing memory it does not own", worker));
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
    throw RuntimeError(
        fmt::format("worker {}: an address outside its memory", worker));
  }

private:
  struct Memory {
    std::map<void *, std::size_t> blocks;
    std::size_t used = 0;
  };
  KernelProvider &kernels;
  std::size_t capacity;
  std::vector<Memory> memories;
  std::vector<bool> localWorkers;
};

/// The tags of the groups' messages: bit 62 set (gathers use bit 63,
/// the CPU executor's tags stay below), below it the number of transfers
/// from the same source to the same destination before this one.
constexpr std::uint64_t ExchangeTag = std::uint64_t(1) << 62;

class HostCommunicator : public Communicator {
public:
  HostCommunicator(HostDevice &device, Transport *processes)
      : device(device), processes(processes) {}
  bool pairsPerWorkerPair() const override { return true; }
  void exchange(const std::vector<Transfer> &group) override {
    // Both sides of a transfer number it alike: each process passes the
    // transfers between two workers in the schedule's order (whether it
    // runs every worker's groups or only its own worker's).
    std::vector<std::uint64_t> tags;
    for (const Transfer &t : group)
      tags.push_back(ExchangeTag | transfers[{t.src, t.dst}]++);
    for (const Transfer &t : group) {
      if (t.src == t.dst)
        throw RuntimeError(
            fmt::format("a transfer from worker {} to itself", t.src));
      bool fromHere = device.isLocal(t.src), toHere = device.isLocal(t.dst);
      if ((!fromHere || !toHere) && !processes)
        throw RuntimeError(fmt::format("a transfer from worker {} to worker "
                                       "{} leaves this process, which has no "
                                       "transport",
                                       t.src, t.dst));
      if (fromHere) {
        device.check(t.src, t.from, t.bytes);
        moved += t.bytes;
      }
      if (fromHere && toHere) {
        device.check(t.dst, t.to, t.bytes);
        std::memcpy(t.to, t.from, t.bytes);
      } else if (fromHere) {
        auto *from = static_cast<const unsigned char *>(t.from);
        processes->send(t.src, t.dst, tags[&t - group.data()],
                        Bytes(from, from + t.bytes));
      }
    }
    // Sends never wait, so every process sends before it receives.
    for (const Transfer &t : group) {
      if (device.isLocal(t.src) || !device.isLocal(t.dst))
        continue;
      Bytes message =
          processes->receive(t.dst, t.src, tags[&t - group.data()]);
      if (message.size() != t.bytes)
        throw RuntimeError(fmt::format(
            "worker {} received {} bytes from worker {} but expected {}",
            t.dst, message.size(), t.src, t.bytes));
      device.check(t.dst, t.to, t.bytes);
      std::memcpy(t.to, message.data(), t.bytes);
    }
  }

private:
  HostDevice &device;
  Transport *processes;
  /// Per (source, destination), the transfers passed so far.
  std::map<std::pair<unsigned, unsigned>, std::uint64_t> transfers;
};
} // namespace

std::unique_ptr<Device> tofu::runtime::createHostDevice(
    unsigned workers, KernelProvider &kernels, std::size_t capacityBytes,
    const std::vector<unsigned> &localWorkers) {
  return std::make_unique<HostDevice>(workers, kernels, capacityBytes,
                                      localWorkers);
}

std::unique_ptr<Communicator>
tofu::runtime::createHostCommunicator(Device &device, Transport *processes) {
  auto *host = dynamic_cast<HostDevice *>(&device);
  if (!host)
    throw RuntimeError("the host communicator needs the host device");
  return std::make_unique<HostCommunicator>(*host, processes);
}
