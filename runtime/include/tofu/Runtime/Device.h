//===- Device.h - What the device executor needs of a device ----*- C++ -*-===//
//
// This file declares the two interfaces the device executor
// (DeviceExecutor.h) drives, so that its logic runs on the host in tests:
//
//  - Device: per worker, a memory space and a stream (an in-order queue of
//    work). Allocation, host <-> device copies, box copies and reductions
//    between device buffers, and op kernels are enqueued on the worker's
//    stream; `synchronize` waits for every worker's stream.
//  - Communicator: grouped transfers of packed device buffers between
//    workers, one group per phase of an op. A group starts after the work
//    already enqueued on its workers' streams and finishes before work
//    enqueued on them afterwards (events on a communication stream in the
//    CUDA implementation). It counts the bytes it moves between distinct
//    workers.
//
// Two implementations: the host emulation here (host memory, kernels from a
// KernelProvider, memcpy), and the CUDA one (CudaDevice.h, library
// TofuRuntimeCUDA, built when the toolkit is found). docs/DeviceExecutor.md
// describes both.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_DEVICE_H
#define TOFU_RUNTIME_DEVICE_H

#include "tofu/Runtime/Box.h"
#include "tofu/Runtime/Transport.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tofu {
namespace runtime {

class KernelProvider;

/// K workers' memories and streams.
class Device {
public:
  virtual ~Device();
  virtual unsigned getNumWorkers() const = 0;
  /// `bytes` (> 0) of worker `worker`'s memory; throws RuntimeError when
  /// it is exhausted.
  virtual void *allocate(unsigned worker, std::size_t bytes) = 0;
  virtual void deallocate(unsigned worker, void *data) = 0;
  /// Host -> device and device -> host; both return when the copy is done.
  virtual void upload(unsigned worker, void *dst, const void *src,
                      std::size_t bytes) = 0;
  virtual void download(unsigned worker, void *dst, const void *src,
                        std::size_t bytes) = 0;
  /// Enqueues the copy of `region` from the dense box `srcBox` at `src` to
  /// the dense box `dstBox` at `dst`, both in the worker's memory. Packing
  /// is a copy into a box equal to the region, unpacking one out of it.
  virtual void copyRegion(unsigned worker, const Box &region, const void *src,
                          const Box &srcBox, void *dst, const Box &dstBox,
                          unsigned elementSize) = 0;
  /// Enqueues combining the packed values at `src` into `region` of the box
  /// `dstBox` at `dst`.
  virtual void reduceRegion(unsigned worker, Reducer reducer, ElementType type,
                            const Box &region, const void *src, void *dst,
                            const Box &dstBox) = 0;
  /// Enqueues kernel `kernel` (an op's kernel index) on `call`, whose data
  /// pointers are in the worker's memory.
  virtual void launch(unsigned worker, unsigned kernel,
                      const KernelCall &call) = 0;
  /// Waits for every worker's enqueued work; throws RuntimeError naming
  /// the first failure.
  virtual void synchronize() = 0;
};

/// One packed buffer going from worker `src` to worker `dst` (distinct).
/// Across processes, the buffer of a worker another process runs is null.
struct Transfer {
  unsigned src, dst;
  const void *from;
  void *to;
  std::size_t bytes;
};

/// Moves packed buffers between the workers of a Device.
class Communicator {
public:
  virtual ~Communicator();
  /// Moves every transfer of `group` as one group (each buffer pair is
  /// disjoint), ordered after the work enqueued on the workers' streams so
  /// far and before the work enqueued afterwards. Where the workers span
  /// processes, every process calls it for every group of the schedule it
  /// runs, in the schedule's order, with the transfers that involve its
  /// workers (possibly none; pairsPerWorkerPair below); each process
  /// counts the bytes its workers send.
  virtual void exchange(const std::vector<Transfer> &group) = 0;
  /// Whether a process may skip the groups without a transfer of its
  /// workers: the transfers between two workers are paired up in the order
  /// their processes pass them, whatever other groups either process saw.
  /// Then a process running one worker may run that worker's schedule
  /// alone (buildWorkerSchedule); otherwise every process runs the whole
  /// schedule's groups.
  virtual bool pairsPerWorkerPair() const { return false; }
  /// Payload bytes moved between distinct workers since the last reset.
  std::int64_t getMovedBytes() const { return moved; }
  void resetMovedBytes() { moved = 0; }

protected:
  std::int64_t moved = 0;
};

/// The host emulation: each worker's memory is host memory, its stream
/// runs work at once, kernels come from `kernels`. `capacityBytes` per
/// worker (0: unlimited) makes allocations beyond it fail as a device's
/// would. `localWorkers` (empty: all) are the workers this process runs;
/// allocating for another is an error.
std::unique_ptr<Device>
createHostDevice(unsigned workers, KernelProvider &kernels,
                 std::size_t capacityBytes = 0,
                 const std::vector<unsigned> &localWorkers = {});
/// The host emulation's communicator over `device` (a host device):
/// memcpy between the workers' buffers, each checked to lie in its
/// worker's memory. With `processes`, a transfer between this process's
/// worker and another process's goes through it (the MPI transport:
/// point-to-point messages, waits bounded by its timeout): the source's
/// process sends the buffer, the destination's receives it.
std::unique_ptr<Communicator>
createHostCommunicator(Device &device, Transport *processes = nullptr);

/// The GPU of each worker: the i-th of `localWorkers` (in increasing order)
/// runs on GPU (localRank + i) mod `gpus`, the others (run by other
/// processes) get -1. One process with all K workers: worker w on GPU
/// w mod gpus; one worker per MPI rank: the rank's index on its node
/// (`localRank`) mod gpus.
std::vector<int> placeWorkersOnGpus(unsigned workers,
                                    const std::vector<unsigned> &localWorkers,
                                    unsigned localRank, unsigned gpus);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_DEVICE_H
