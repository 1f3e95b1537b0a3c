//===- MPITransport.cpp - One worker per MPI rank -------------------------===//
//
// This file implements the MPI transport. MPI only promises tags up to
// 32767, so every runtime message travels with its 64-bit runtime tag in an
// 8-byte trailer after the payload (so a receive drops it without moving
// the payload), under an MPI tag derived from it
// (getDataTag: the op and phase modulo the tags MPI offers, so that the
// messages of neighbouring ops have distinct MPI tags). A receive posted
// ahead (postReceive) is an MPI_Irecv of exactly its size into a buffer of
// the transport, which MPI fills as soon as the message comes; receive then
// polls it (MPI_Test) and checks its trailer. Other messages are taken by
// polling (MPI_Iprobe) into a buffer of unexpected messages keyed by
// (source, tag), until the one wanted is there, a failure notice
// (FailureTag) arrives, or the timeout passes; a receive never blocks in
// MPI. Sends are MPI_Isend of a buffer kept until the send completes.
// Each rank counts the payload bytes (not trailers) it sends;
// sumOverProcesses adds counts up with MPI_Iallreduce and broadcast sends rank
// 0's bytes with MPI_Ibcast, both polled the same way. MPISession::agree,
// the start-up agreement, is every rank's message to rank 0 and rank 0's
// answer, on a copy of the world communicator, each wait with a deadline
// that names the rank waited for.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/MPITransport.h"
#include "tofu/Runtime/Error.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

using namespace tofu::runtime;
using std::int64_t;
using std::uint64_t;

/// This process's rank in MPI_COMM_WORLD and the world's size.
static std::pair<unsigned, unsigned> getWorld() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return {unsigned(rank), unsigned(size)};
}

MPISession::MPISession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Only the thread that created the session calls MPI (the executor
    // runs a rank's one worker on the calling thread).
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  std::tie(rank, size) = getWorld();
  // The ranks sharing this node's memory, in world-rank order.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, int(rank),
                      MPI_INFO_NULL, &node);
  int nodeRank = 0;
  MPI_Comm_rank(node, &nodeRank);
  localRank = unsigned(nodeRank);
  MPI_Comm_free(&node);
  static_assert(sizeof(MPI_Comm) <= sizeof(agreeComm), "MPI_Comm too wide");
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::memcpy(&agreeComm, &comm, sizeof(comm));
}

MPISession::~MPISession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

/// Polls `request` until it completes or `deadline` passes; true if it
/// completed.
static bool waitUntil(MPI_Request &request,
                      std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::optional<bool> MPISession::agree(bool ready,
                                      std::chrono::milliseconds allowance,
                                      std::string &late) {
  MPI_Comm comm;
  std::memcpy(&comm, &agreeComm, sizeof(comm));
  auto now = std::chrono::steady_clock::now();
  // In milliseconds: no allowance (milliseconds::max) overflows as ns.
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::time_point::max() - now);
  auto deadline = allowance >= left
                      ? std::chrono::steady_clock::time_point::max()
                      : now + allowance;
  double seconds = std::chrono::duration<double>(allowance).count();
  int verdict = ready ? 1 : 0;
  if (rank != 0) {
    // Tell rank 0, then wait for its verdict.
    MPI_Request sent, answer;
    MPI_Isend(&verdict, 1, MPI_INT, 0, 0, comm, &sent);
    int all = 0;
    MPI_Irecv(&all, 1, MPI_INT, 0, 0, comm, &answer);
    if (!waitUntil(answer, deadline)) {
      late = fmt::format("rank 0, which waits for every rank, did not "
                         "answer within {:g} s of rank {} being ready",
                         seconds, rank);
      return std::nullopt;
    }
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    return all == 1;
  }
  // Rank 0 hears from every rank, in any order, then answers all.
  std::vector<int> readies(size, 1);
  std::vector<MPI_Request> requests(size, MPI_REQUEST_NULL);
  for (unsigned r = 1; r != size; ++r)
    MPI_Irecv(&readies[r], 1, MPI_INT, int(r), 0, comm, &requests[r]);
  for (unsigned r = 1; r != size; ++r)
    if (!waitUntil(requests[r], deadline)) {
      unsigned missing = 0;
      for (unsigned s = r; s != size; ++s) {
        int done = 0;
        MPI_Test(&requests[s], &done, MPI_STATUS_IGNORE);
        missing += !done;
      }
      late = fmt::format("rank {} was not ready within {:g} s of rank 0{}",
                         r, seconds,
                         missing > 1 ? fmt::format(" ({} ranks were not)",
                                                   missing)
                                     : "");
      return std::nullopt;
    }
  for (unsigned r = 1; r != size; ++r)
    verdict = std::min(verdict, readies[r]);
  std::vector<MPI_Request> answers(size, MPI_REQUEST_NULL);
  for (unsigned r = 1; r != size; ++r)
    MPI_Isend(&verdict, 1, MPI_INT, int(r), 0, comm, &answers[r]);
  MPI_Waitall(int(size), answers.data(), MPI_STATUSES_IGNORE);
  return verdict == 1;
}

bool MPISession::agree(bool ready) {
  std::string late;
  return *agree(ready, std::chrono::milliseconds::max(), late);
}

void MPISession::abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

namespace {

/// The MPI tag of failure notices; data messages use getDataTag's, from
/// FirstDataTag up.
enum MPITag : int { FailureTag = 2, FirstDataTag = 3 };
constexpr size_t TrailerBytes = sizeof(uint64_t);

/// Takes the runtime tag from the trailer of `message` (at least
/// TrailerBytes long), leaving the payload.
static uint64_t takeTrailer(Bytes &message) {
  uint64_t tag;
  std::memcpy(&tag, message.data() + message.size() - TrailerBytes,
              TrailerBytes);
  message.resize(message.size() - TrailerBytes);
  return tag;
}

/// The largest MPI tag (at least 32767, MPI's promise).
static int getTagUpperBound() {
  void *value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
  return found ? *static_cast<int *>(value) : 32767;
}

class MPITransport : public Transport {
public:
  explicit MPITransport(std::chrono::milliseconds timeout);
  ~MPITransport() override;

  unsigned getNumWorkers() const override { return size; }
  std::vector<unsigned> getLocalWorkers() const override { return {rank}; }
  void sumOverProcesses(std::vector<int64_t> &values) override;
  void broadcast(Bytes &data) override;
  void send(unsigned src, unsigned dst, uint64_t tag, Bytes payload) override;
  Bytes receive(unsigned dst, unsigned src, uint64_t tag) override;
  void postReceive(unsigned dst, unsigned src, uint64_t tag,
                   size_t bytes) override;
  void progress(unsigned) override { progress(); }
  void fail(unsigned worker, const std::string &why) override;
  int64_t getMovedBytes() const override { return moved; }
  void resetMovedBytes() override { moved = 0; }

private:
  /// A nonblocking operation and the buffers MPI reads or writes until it
  /// completes.
  struct Pending {
    MPI_Request request;
    std::vector<unsigned char> buffer;
  };
  void startSend(unsigned dst, int mpiTag, Bytes buffer);
  /// The MPI tag of data messages under runtime tag `tag`: the op and
  /// phase bits (and the gather bit) modulo the data tags MPI offers.
  int getDataTag(uint64_t tag) const {
    uint64_t key = (tag & ((uint64_t(1) << 40) - 1)) ^ (tag >> 63);
    return FirstDataTag + int(key % uint64_t(tagUpperBound - FirstDataTag + 1));
  }
  /// Takes every message that has arrived: data into `unexpected`, a
  /// failure notice into `failure`; forgets sends that completed.
  void progress();
  /// Polls until `ready()` holds; throws RuntimeError when a worker failed
  /// or the timeout passes (`waiting()` then says what for).
  template <typename ReadyFn, typename WaitingFn>
  void waitFor(ReadyFn ready, WaitingFn waiting);
  /// Waits for the nonblocking collective `request` on `buffer` (`what`
  /// names it in the timeout's message); on failure keeps the buffer, which
  /// MPI may still write, and rethrows.
  template <typename T>
  void finishCollective(MPI_Request &request, std::vector<T> &buffer,
                        const char *what);

  unsigned rank = 0;
  unsigned size = 1;
  int tagUpperBound = 32767;
  std::chrono::milliseconds timeout;
  std::deque<Pending> sends;
  /// Receives posted ahead, by (source, tag): payload and trailer.
  std::map<std::pair<unsigned, uint64_t>, Pending> posted;
  std::map<std::pair<unsigned, uint64_t>, std::deque<Bytes>> unexpected;
  /// Collectives abandoned by a failure: MPI may still write their buffers.
  std::deque<std::shared_ptr<void>> abandoned;
  std::string failure;
  int64_t moved = 0;
};

} // namespace

MPITransport::MPITransport(std::chrono::milliseconds timeout)
    : timeout(timeout) {
  std::tie(rank, size) = getWorld();
  tagUpperBound = getTagUpperBound();
}

MPITransport::~MPITransport() {
  // Every data message of a finished step has been received, so its send
  // completes; a failure notice to a rank that stopped listening may not:
  // wait a moment, then let MPI finish it alone (its buffer stays).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!sends.empty() && std::chrono::steady_clock::now() < deadline) {
    progress();
    std::this_thread::yield();
  }
  for (Pending &pending : sends) {
    MPI_Request_free(&pending.request);
    new std::vector<unsigned char>(std::move(pending.buffer));
  }
  // Receives posted for a step that failed: MPI may still write them.
  for (auto &[key, pending] : posted) {
    MPI_Cancel(&pending.request);
    MPI_Request_free(&pending.request);
    new std::vector<unsigned char>(std::move(pending.buffer));
  }
}

void MPITransport::startSend(unsigned dst, int mpiTag, Bytes buffer) {
  if (buffer.size() > size_t(INT_MAX))
    throw RuntimeError(fmt::format(
        "worker {}: a message of {} bytes is more than one MPI send carries",
        rank, buffer.size()));
  sends.push_back(Pending{MPI_REQUEST_NULL, std::move(buffer)});
  Pending &pending = sends.back();
  MPI_Isend(pending.buffer.data(), int(pending.buffer.size()), MPI_BYTE,
            int(dst), mpiTag, MPI_COMM_WORLD, &pending.request);
}

void MPITransport::send(unsigned src, unsigned dst, uint64_t tag,
                        Bytes payload) {
  if (src != rank || dst >= size || dst == rank)
    throw RuntimeError(fmt::format(
        "rank {} cannot send from worker {} to worker {}", rank, src, dst));
  if (!(tag & UncountedTag))
    moved += payload.size();
  // In place where the sender left room (SendSlackBytes), else a copy.
  static_assert(TrailerBytes <= SendSlackBytes);
  size_t size = payload.size();
  Bytes buffer = std::move(payload);
  buffer.resize(size + TrailerBytes);
  std::memcpy(buffer.data() + size, &tag, TrailerBytes);
  startSend(dst, getDataTag(tag), std::move(buffer));
  progress();
}

void MPITransport::postReceive(unsigned dst, unsigned src, uint64_t tag,
                               size_t bytes) {
  if (dst != rank || src >= size || src == rank)
    throw RuntimeError(
        fmt::format("rank {} cannot post a receive for worker {} from "
                    "worker {}",
                    rank, dst, src));
  std::pair<unsigned, uint64_t> key(src, tag);
  // Already taken by a poll, or posted: nothing to start.
  if (unexpected.count(key) || posted.count(key))
    return;
  if (bytes + TrailerBytes > size_t(INT_MAX))
    throw RuntimeError(fmt::format(
        "worker {}: a message of {} bytes is more than one MPI receive takes",
        rank, bytes));
  Pending &pending = posted[key];
  pending.buffer.resize(bytes + TrailerBytes);
  MPI_Irecv(pending.buffer.data(), int(pending.buffer.size()), MPI_BYTE,
            int(src), getDataTag(tag), MPI_COMM_WORLD, &pending.request);
}

void MPITransport::progress() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status);
    if (!arrived)
      break;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    Bytes message(count);
    MPI_Recv(message.data(), count, MPI_BYTE, status.MPI_SOURCE,
             status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == FailureTag) {
      if (failure.empty())
        failure.assign(message.begin(), message.end());
      continue;
    }
    if (message.size() < TrailerBytes) {
      failure = fmt::format(
          "worker {} received a message without a trailer from worker {}", rank,
          status.MPI_SOURCE);
      continue;
    }
    uint64_t tag = takeTrailer(message);
    unexpected[{unsigned(status.MPI_SOURCE), tag}].push_back(
        std::move(message));
  }
  while (!sends.empty()) {
    int done = 0;
    MPI_Test(&sends.front().request, &done, MPI_STATUS_IGNORE);
    if (!done)
      break;
    sends.pop_front();
  }
}

template <typename ReadyFn, typename WaitingFn>
void MPITransport::waitFor(ReadyFn ready, WaitingFn waiting) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // Poll at once, then back off to at most 100 microseconds between polls
  // so that a waiting rank leaves the cores to ranks that compute, yet
  // notices a message soon after it comes (a step of ResNet-18 at K = 2
  // takes about 90 receives per worker).
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    progress();
    if (!failure.empty())
      throw RuntimeError(failure);
    if (ready())
      return;
    if (std::chrono::steady_clock::now() > deadline)
      throw RuntimeError(fmt::format("{}: waited more than {} ms", waiting(),
                                     timeout.count()));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(100));
  }
}

Bytes MPITransport::receive(unsigned dst, unsigned src, uint64_t tag) {
  if (dst != rank || src >= size || src == rank)
    throw RuntimeError(
        fmt::format("rank {} cannot receive for worker {} from worker {}",
                    rank, dst, src));
  std::pair<unsigned, uint64_t> key(src, tag);
  auto waiting = [&] {
    return fmt::format("worker {} waited for a message from worker {}", dst,
                       src);
  };
  auto post = posted.find(key);
  if (post != posted.end()) {
    Pending &pending = post->second;
    MPI_Status status;
    waitFor(
        [&] {
          int done = 0;
          MPI_Test(&pending.request, &done, &status);
          return done != 0;
        },
        waiting);
    Bytes payload = std::move(pending.buffer);
    posted.erase(post);
    // A shorter message than posted leaves the end of the buffer unwritten.
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (size_t(count) < TrailerBytes)
      throw RuntimeError(fmt::format(
          "worker {} received a message without a trailer from worker {}", dst,
          src));
    payload.resize(size_t(count));
    uint64_t got = takeTrailer(payload);
    if (got != tag)
      throw RuntimeError(fmt::format(
          "worker {} expected message {:#x} from worker {} but got {:#x}", dst,
          tag, src, got));
    return payload;
  }
  waitFor([&] { return unexpected.count(key) != 0; }, waiting);
  auto it = unexpected.find(key);
  Bytes payload = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty())
    unexpected.erase(it);
  return payload;
}

template <typename T>
void MPITransport::finishCollective(MPI_Request &request,
                                    std::vector<T> &buffer,
                                    const char *what) {
  try {
    waitFor(
        [&] {
          int done = 0;
          MPI_Test(&request, &done, MPI_STATUS_IGNORE);
          return done != 0;
        },
        [&] {
          return fmt::format("worker {} waited for {}", rank, what);
        });
  } catch (...) {
    // Moving the vector keeps its storage, which MPI may still write.
    abandoned.push_back(std::make_shared<std::vector<T>>(std::move(buffer)));
    throw;
  }
}

void MPITransport::sumOverProcesses(std::vector<int64_t> &values) {
  // [0, n) the values, [n, 2n) the sums: one buffer to abandon on failure.
  size_t n = values.size();
  std::vector<int64_t> buffer(2 * n);
  std::copy(values.begin(), values.end(), buffer.begin());
  MPI_Request request;
  MPI_Iallreduce(buffer.data(), buffer.data() + n, int(n), MPI_INT64_T,
                 MPI_SUM, MPI_COMM_WORLD, &request);
  finishCollective(request, buffer, "the other ranks' counts");
  std::copy(buffer.begin() + n, buffer.end(), values.begin());
}

void MPITransport::broadcast(Bytes &data) {
  if (data.size() > size_t(INT_MAX))
    throw RuntimeError(fmt::format(
        "worker {}: a broadcast of {} bytes is more than one MPI call carries",
        rank, data.size()));
  Bytes buffer = data;
  MPI_Request request;
  MPI_Ibcast(buffer.data(), int(buffer.size()), MPI_BYTE, 0, MPI_COMM_WORLD,
             &request);
  finishCollective(request, buffer, "rank 0's broadcast");
  data = std::move(buffer);
}

void MPITransport::fail(unsigned worker, const std::string &why) {
  // A rank that fails because it heard of another's failure has nothing
  // new to tell.
  if (!failure.empty())
    return;
  failure = fmt::format("worker {} failed: {}", worker, why);
  for (unsigned r = 0; r != size; ++r)
    if (r != rank)
      startSend(r, FailureTag, Bytes(failure.begin(), failure.end()));
}

std::unique_ptr<Transport>
tofu::runtime::createMPITransport(std::chrono::milliseconds timeout) {
  return std::make_unique<MPITransport>(timeout);
}
