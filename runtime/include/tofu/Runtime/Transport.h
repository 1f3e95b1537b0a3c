//===- Transport.h - How workers exchange bytes -----------------*- C++ -*-===//
//
// This file declares Transport, the interface the executor sends and
// receives pieces of tensors through, and the in-process transport whose
// workers are threads of one process. A message goes from one worker to
// another under a tag; sends never block, receives wait at most the
// transport's timeout. Every transport counts the payload bytes it moves
// between distinct workers: that count is what `tofu-run --report` calls
// moved_bytes (docs/Runtime.md). A transport may span several processes
// (the MPI transport, MPITransport.h, runs one worker per rank): each
// process runs its local workers and counts what they send, and
// sumOverProcesses adds the counts up.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_TRANSPORT_H
#define TOFU_RUNTIME_TRANSPORT_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// A message's payload.
using Bytes = std::vector<unsigned char>;

/// The bytes a transport may append to a payload it sends (the MPI
/// transport's tag trailer): a sender that gives `send` a payload with
/// capacity for this many more bytes spares it a copy.
constexpr std::size_t SendSlackBytes = 8;

/// Messages under a tag with this bit set carry results to the process
/// of worker 0 (Executor::gather), not the step's traffic: not counted.
constexpr std::uint64_t UncountedTag = std::uint64_t(1) << 63;

/// Moves bytes between K workers.
class Transport {
public:
  virtual ~Transport();
  virtual unsigned getNumWorkers() const = 0;
  /// The workers this process runs, in increasing order: all K for an
  /// in-process transport (the default), this rank's one under MPI.
  virtual std::vector<unsigned> getLocalWorkers() const;
  /// Adds `values` up element-wise over the transport's processes: every
  /// process calls it with as many values and gets the sums. One process
  /// (the default) keeps them. Throws RuntimeError when a worker failed or
  /// the wait exceeds the timeout.
  virtual void sumOverProcesses(std::vector<std::int64_t> &values);
  /// Gives every process the `data` of the process running worker 0 (an
  /// MPI broadcast); every process calls it with a buffer of the same size.
  /// One process (the default) keeps its own. Throws RuntimeError as
  /// sumOverProcesses does.
  virtual void broadcast(Bytes &data);
  /// Sends `payload` from worker `src` to worker `dst` (distinct) under
  /// `tag`; does not wait for the receiver.
  virtual void send(unsigned src, unsigned dst, std::uint64_t tag,
                    Bytes payload) = 0;
  /// Waits for the message from `src` to `dst` under `tag`. Throws
  /// RuntimeError when the wait exceeds the timeout or a worker failed.
  virtual Bytes receive(unsigned dst, unsigned src, std::uint64_t tag) = 0;
  /// Announces, before worker `dst` computes, a message of `bytes` payload
  /// bytes it will take from `src` under `tag` with receive: a transport
  /// may start taking it now into memory of its own (MPI: an MPI_Irecv),
  /// so that it arrives while `dst` computes (docs/Runtime.md,
  /// "Overlap"). Never waits. The default does nothing: the thread
  /// transport's send already puts the payload in the receiver's mailbox.
  virtual void postReceive(unsigned dst, unsigned src, std::uint64_t tag,
                           std::size_t bytes);
  /// Lets worker `worker`'s posted receives and pending sends progress
  /// without waiting (MPI: takes what has arrived). The default does
  /// nothing.
  virtual void progress(unsigned worker);
  /// Marks worker `worker` failed with `why`: every receive, now and later,
  /// throws instead of waiting.
  virtual void fail(unsigned worker, const std::string &why) = 0;
  /// Payload bytes this process's workers sent since the last reset, but
  /// for those under UncountedTag.
  virtual std::int64_t getMovedBytes() const = 0;
  virtual void resetMovedBytes() = 0;
};

/// The in-process transport: K workers as threads sharing mailboxes.
std::unique_ptr<Transport>
createThreadTransport(unsigned workers, std::chrono::milliseconds timeout);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_TRANSPORT_H
