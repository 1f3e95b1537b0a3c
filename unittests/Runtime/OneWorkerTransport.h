//===- OneWorkerTransport.h - One simulated process of a job ---*- C++ -*-===//
//
// This file defines the transport the runtime's unit tests run one
// executor per worker on, as under MPI (one process per worker), with the
// "processes" as threads of the test sharing a thread transport.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_RUNTIME_ONEWORKERTRANSPORT_H
#define TOFU_UNITTESTS_RUNTIME_ONEWORKERTRANSPORT_H

#include "tofu/Runtime/Transport.h"

#include "gtest/gtest.h"

#include <condition_variable>
#include <mutex>

namespace tofu {
namespace runtime {
namespace test {

/// One "process" of a job whose processes share a thread transport: it
/// runs one worker, counts what that worker sends, and adds counts up with
/// the other processes at a barrier (what the MPI transport does over MPI).
class OneWorkerTransport : public Transport {
public:
  struct Shared {
    std::unique_ptr<Transport> inner;
    std::mutex mutex;
    std::condition_variable done;
    std::vector<std::int64_t> total, result;
    unsigned arrived = 0, generation = 0;
  };
  OneWorkerTransport(Shared &shared, unsigned worker)
      : shared(shared), worker(worker) {}
  unsigned getNumWorkers() const override {
    return shared.inner->getNumWorkers();
  }
  std::vector<unsigned> getLocalWorkers() const override { return {worker}; }
  void sumOverProcesses(std::vector<std::int64_t> &values) override {
    std::unique_lock<std::mutex> lock(shared.mutex);
    shared.total.resize(values.size());
    for (size_t i = 0; i != values.size(); ++i)
      shared.total[i] += values[i];
    unsigned generation = shared.generation;
    if (++shared.arrived == getNumWorkers()) {
      shared.result = std::move(shared.total);
      shared.total.clear();
      shared.arrived = 0;
      ++shared.generation;
      shared.done.notify_all();
    } else {
      shared.done.wait(lock, [&] { return shared.generation != generation; });
    }
    values = shared.result;
  }
  void send(unsigned src, unsigned dst, std::uint64_t tag,
            Bytes payload) override {
    EXPECT_EQ(src, worker);
    if (!(tag & UncountedTag))
      moved += payload.size();
    shared.inner->send(src, dst, tag, std::move(payload));
  }
  Bytes receive(unsigned dst, unsigned src, std::uint64_t tag) override {
    EXPECT_EQ(dst, worker);
    return shared.inner->receive(dst, src, tag);
  }
  void fail(unsigned w, const std::string &why) override {
    shared.inner->fail(w, why);
  }
  std::int64_t getMovedBytes() const override { return moved; }
  void resetMovedBytes() override { moved = 0; }

private:
  Shared &shared;
  unsigned worker;
  std::int64_t moved = 0;
};

} // namespace test
} // namespace runtime
} // namespace tofu

#endif // TOFU_UNITTESTS_RUNTIME_ONEWORKERTRANSPORT_H
