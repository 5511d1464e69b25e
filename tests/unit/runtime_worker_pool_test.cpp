// runtime_worker_pool_test.cpp — the pool that drives DP replicas and shard loading runs every
// index exactly once per job, all of them at the same time, on the same threads job after job
// (no thread created per step), index 0 on the caller; a failure reaches the caller (the lowest
// index's) and leaves the pool usable.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/worker_pool.h"

namespace ddpbench::runtime {
namespace {

TEST(WorkerPool, RunsEveryIndexOnceOnTheSameThreadsEveryJob) {
  WorkerPool pool(4);
  std::map<int64_t, std::thread::id> first_threads;
  for (int job = 0; job < 50; ++job) {
    std::vector<std::atomic<int>> ran(4);
    std::vector<std::thread::id> ids(4);
    pool.run([&](int64_t i) {
      ran[static_cast<size_t>(i)]++;
      ids[static_cast<size_t>(i)] = std::this_thread::get_id();
    });
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(ran[static_cast<size_t>(i)], 1) << "index " << i << " job " << job;
      if (job == 0) first_threads[i] = ids[static_cast<size_t>(i)];
      EXPECT_EQ(ids[static_cast<size_t>(i)], first_threads[i]) << "a new thread for index " << i;
    }
    EXPECT_EQ(ids[0], std::this_thread::get_id()) << "index 0 runs on the caller";
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 4u);
  }
}

TEST(WorkerPool, RunsTheIndicesTogether) {
  // Each index waits until all have arrived: a pool that ran them one after another would hang
  // here, and the deadline turns that into a failure.
  WorkerPool pool(3);
  std::atomic<int> arrived{0};
  std::atomic<bool> all_met{true};
  pool.run([&](int64_t) {
    ++arrived;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < 3) {
      if (std::chrono::steady_clock::now() > deadline) {
        all_met = false;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_TRUE(all_met);
}

TEST(WorkerPool, RethrowsTheLowestFailingIndexAndStaysUsable) {
  WorkerPool pool(3);
  try {
    pool.run([](int64_t i) {
      if (i >= 1) throw std::runtime_error("index " + std::to_string(i));
    });
    ADD_FAILURE() << "no exception reached the caller";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 1");
  }
  std::atomic<int> ran{0};
  pool.run([&](int64_t) { ++ran; });
  EXPECT_EQ(ran, 3);
}

TEST(WorkerPool, OfOneRunsOnTheCallerOnly) {
  WorkerPool pool(1);
  std::thread::id where;
  pool.run([&](int64_t) { where = std::this_thread::get_id(); });
  EXPECT_EQ(where, std::this_thread::get_id());
  EXPECT_THROW(WorkerPool(0), std::logic_error);
}

}  // namespace
}  // namespace ddpbench::runtime
