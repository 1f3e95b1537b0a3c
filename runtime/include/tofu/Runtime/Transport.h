//===- Transport.h - How workers exchange bytes -----------------*- C++ -*-===//
//
// This file declares Transport, the interface the executor sends and
// receives pieces of tensors through, and the in-process transport whose
// workers are threads of one process. A message goes from one worker to
// another under a tag; sends never block, receives wait at most the
// transport's timeout. Every transport counts the payload bytes it moves
// between distinct workers: that count is what `tofu-run --report` calls
// moved_bytes (docs/Runtime.md). An MPI transport implements the same
// interface with one worker per rank.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_TRANSPORT_H
#define TOFU_RUNTIME_TRANSPORT_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// A message's payload.
using Bytes = std::vector<unsigned char>;

/// Moves bytes between K workers.
class Transport {
public:
  virtual ~Transport();
  virtual unsigned getNumWorkers() const = 0;
  /// Sends `payload` from worker `src` to worker `dst` (distinct) under
  /// `tag`; does not wait for the receiver.
  virtual void send(unsigned src, unsigned dst, std::uint64_t tag,
                    Bytes payload) = 0;
  /// Waits for the message from `src` to `dst` under `tag`. Throws
  /// RuntimeError when the wait exceeds the timeout or a worker failed.
  virtual Bytes receive(unsigned dst, unsigned src, std::uint64_t tag) = 0;
  /// Marks worker `worker` failed with `why`: every receive, now and later,
  /// throws instead of waiting.
  virtual void fail(unsigned worker, const std::string &why) = 0;
  /// Payload bytes sent since the last reset.
  virtual std::int64_t getMovedBytes() const = 0;
  virtual void resetMovedBytes() = 0;
};

/// The in-process transport: K workers as threads sharing mailboxes.
std::unique_ptr<Transport>
createThreadTransport(unsigned workers, std::chrono::milliseconds timeout);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_TRANSPORT_H
