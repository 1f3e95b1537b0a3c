//===- ThreadTransportTest.cpp - The in-process transport's checks -------===//
//
// Tests that the thread transport delivers and counts a message between two
// of its workers, and that a send, receive or failure naming a worker it
// does not have (or a worker to itself) throws a clear error instead of
// indexing past its per-worker state.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Transport.h"
#include "ErrorMessage.h"

#include "gtest/gtest.h"

using namespace tofu::runtime;

namespace {

TEST(ThreadTransportTest, DeliversAndCountsBetweenItsWorkers) {
  auto transport = createThreadTransport(2, std::chrono::seconds(10));
  transport->send(1, 0, 7, Bytes{1, 2, 3});
  EXPECT_EQ(transport->receive(0, 1, 7), (Bytes{1, 2, 3}));
  EXPECT_EQ(transport->getMovedBytes(), 3);
}

TEST(ThreadTransportTest, RejectsWorkersItDoesNotHave) {
  auto transport = createThreadTransport(2, std::chrono::seconds(10));
  EXPECT_EQ(getError([&] { transport->send(0, 2, 7, Bytes{1}); }),
            "the thread transport of 2 workers cannot send from worker 0 to "
            "worker 2");
  EXPECT_EQ(getError([&] { transport->send(5, 1, 7, Bytes{1}); }),
            "the thread transport of 2 workers cannot send from worker 5 to "
            "worker 1");
  EXPECT_EQ(getError([&] { transport->receive(2, 0, 7); }),
            "the thread transport of 2 workers cannot receive from worker 0 "
            "to worker 2");
  EXPECT_EQ(getError([&] { transport->receive(1, 1, 7); }),
            "the thread transport of 2 workers cannot receive from worker 1 "
            "to worker 1");
  EXPECT_EQ(getError([&] { transport->fail(3, "why"); }),
            "the thread transport of 2 workers has no worker 3 to fail");
  // Nothing was sent or marked failed: a good pair still works.
  EXPECT_EQ(transport->getMovedBytes(), 0);
  transport->send(0, 1, 7, Bytes{9});
  EXPECT_EQ(transport->receive(1, 0, 7), Bytes{9});
}

} // namespace
