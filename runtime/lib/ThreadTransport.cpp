//===- ThreadTransport.cpp - Workers as threads of one process ------------===//
//
// This file implements the in-process Transport: one mailbox per
// (destination, source, tag) under one mutex, a condition variable per
// destination that its receiver waits on with a deadline (a send wakes
// only its destination's worker, not every waiting one), and a failure
// flag that wakes every receiver when a worker gives up. Send and receive
// check their workers (distinct, below K) before indexing the condition
// variables. Payload bytes are counted on send (but
// for UncountedTag's). It also holds the Transport interface's defaults for
// transports of one process: every worker local, sums kept as they are.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Transport.h"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

using namespace tofu::runtime;

Transport::~Transport() = default;

std::vector<unsigned> Transport::getLocalWorkers() const {
  std::vector<unsigned> all(getNumWorkers());
  for (unsigned w = 0; w != all.size(); ++w)
    all[w] = w;
  return all;
}

void Transport::sumOverProcesses(std::vector<std::int64_t> &) {}

void Transport::broadcast(Bytes &) {}

void Transport::postReceive(unsigned, unsigned, std::uint64_t, std::size_t) {}

void Transport::progress(unsigned) {}

namespace {

class ThreadTransport : public Transport {
public:
  ThreadTransport(unsigned workers, std::chrono::milliseconds timeout)
      : workers(workers), timeout(timeout), arrived(workers) {}

  unsigned getNumWorkers() const override { return workers; }
  void send(unsigned src, unsigned dst, std::uint64_t tag,
            Bytes payload) override;
  Bytes receive(unsigned dst, unsigned src, std::uint64_t tag) override;
  void fail(unsigned worker, const std::string &why) override;
  std::int64_t getMovedBytes() const override { return moved; }
  void resetMovedBytes() override;

private:
  using Key = std::tuple<unsigned, unsigned, std::uint64_t>;
  /// Throws unless `from` and `to` are distinct workers of this transport
  /// (`what`: "send" or "receive"), before any of its per-worker state is
  /// indexed.
  void checkPair(const char *what, unsigned from, unsigned to) const;
  unsigned workers;
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  /// Per destination worker: signalled when a message for it arrives.
  std::vector<std::condition_variable> arrived;
  std::map<Key, std::deque<Bytes>> mailboxes;
  std::atomic<std::int64_t> moved{0};
  std::string failure;
};

} // namespace

void ThreadTransport::checkPair(const char *what, unsigned from,
                                unsigned to) const {
  if (from >= workers || to >= workers || from == to)
    throw RuntimeError(fmt::format(
        "the thread transport of {} workers cannot {} from worker {} to "
        "worker {}",
        workers, what, from, to));
}

void ThreadTransport::send(unsigned src, unsigned dst, std::uint64_t tag,
                           Bytes payload) {
  checkPair("send", src, dst);
  if (!(tag & UncountedTag))
    moved += payload.size();
  {
    std::lock_guard<std::mutex> lock(mutex);
    mailboxes[Key(dst, src, tag)].push_back(std::move(payload));
  }
  arrived[dst].notify_all();
}

Bytes ThreadTransport::receive(unsigned dst, unsigned src, std::uint64_t tag) {
  checkPair("receive", src, dst);
  std::unique_lock<std::mutex> lock(mutex);
  Key key(dst, src, tag);
  auto ready = [&] {
    auto it = mailboxes.find(key);
    return !failure.empty() || (it != mailboxes.end() && !it->second.empty());
  };
  if (!arrived[dst].wait_for(lock, timeout, ready))
    throw RuntimeError(fmt::format(
        "worker {} waited more than {} ms for a message from worker {}", dst,
        timeout.count(), src));
  if (!failure.empty())
    throw RuntimeError(failure);
  auto it = mailboxes.find(key);
  Bytes payload = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty())
    mailboxes.erase(it);
  return payload;
}

void ThreadTransport::fail(unsigned worker, const std::string &why) {
  if (worker >= workers)
    throw RuntimeError(fmt::format(
        "the thread transport of {} workers has no worker {} to fail",
        workers, worker));
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.empty())
      failure = fmt::format("worker {} failed: {}", worker, why);
  }
  for (std::condition_variable &cv : arrived)
    cv.notify_all();
}

void ThreadTransport::resetMovedBytes() { moved = 0; }

std::unique_ptr<Transport>
tofu::runtime::createThreadTransport(unsigned workers,
                                     std::chrono::milliseconds timeout) {
  return std::make_unique<ThreadTransport>(workers, timeout);
}
