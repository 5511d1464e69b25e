// comm_watched_queue_test.cpp — the mpi communicator's thread (comm/watched_queue.h): operations
// run one at a time in submission order, exceptions reach their future, and an operation still
// running after the timeout is reported once, by name, while it runs (Note [An MPI job ends by
// MPI_Abort]); quick operations and a queue without a timeout are never reported.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/watched_queue.h"

namespace ddpbench::comm {
namespace {

using std::chrono::milliseconds;

struct Stalls {
  std::mutex mu;
  std::vector<std::string> names;
  std::vector<milliseconds> waited;
  WatchedQueue::StallHandler handler() {
    return [this](const std::string& name, milliseconds w) {
      const std::lock_guard<std::mutex> lock(mu);
      names.push_back(name);
      waited.push_back(w);
    };
  }
};

TEST(WatchedQueue, RunsInOrderAndReportsOnlyTheOperationPastItsTimeoutOnceWhileItRuns) {
  Stalls stalls;
  std::vector<int> order;
  std::atomic<bool> reported_while_running{false};
  {
    WatchedQueue queue(milliseconds(50), stalls.handler());
    queue.submit("quick", [&] { order.push_back(1); }).get();
    auto slow = queue.submit("MPI_Allreduce", [&] {
      order.push_back(2);
      for (int i = 0; i < 100 && !reported_while_running; ++i) {
        std::this_thread::sleep_for(milliseconds(20));
        const std::lock_guard<std::mutex> lock(stalls.mu);
        reported_while_running = !stalls.names.empty();
      }
    });
    auto failing = queue.submit("MPI_Bcast", [&] {
      order.push_back(3);
      throw std::runtime_error("MPI_Bcast failed");
    });
    slow.get();
    EXPECT_THROW(failing.get(), std::runtime_error);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(reported_while_running) << "the stall was reported only after the operation ended";
  ASSERT_EQ(stalls.names, std::vector<std::string>{"MPI_Allreduce"});
  EXPECT_GT(stalls.waited.front(), milliseconds(50));
}

TEST(WatchedQueue, WithoutATimeoutNothingIsReported) {
  Stalls stalls;
  {
    WatchedQueue queue(milliseconds(0), stalls.handler());
    queue.submit("MPI_Barrier", [] { std::this_thread::sleep_for(milliseconds(250)); }).get();
  }
  EXPECT_TRUE(stalls.names.empty());
}

}  // namespace
}  // namespace ddpbench::comm
