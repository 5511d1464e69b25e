// worker_pool.h — a fixed set of threads that run fn(i) for i in [0, size) together and wait for
// all of them: how one process drives its DP replicas, or loads a step's shards, at once. The
// threads are created once, with the pool, and reused every step (creating K threads per step
// was a measurable part of a small model's DP step); index 0 runs on the calling thread, so a
// pool of one starts no thread at all. The first failure (lowest index) is rethrown on the
// calling thread after every index has finished, and the pool stays usable.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ddpbench::runtime {

class WorkerPool {
 public:
  explicit WorkerPool(int64_t size);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int64_t size() const { return size_; }
  // Runs fn(0) .. fn(size - 1), each on its own thread, and returns when all have finished. One
  // caller at a time; fn must not call run() on the same pool.
  void run(const std::function<void(int64_t i)>& fn);

 private:
  void work(int64_t index);

  const int64_t size_;
  std::mutex mutex_;
  std::condition_variable start_;  // a new job, or stop
  std::condition_variable done_;   // the last worker of a job finished
  const std::function<void(int64_t)>* job_ = nullptr;
  uint64_t generation_ = 0;  // bumped per job, so a worker runs each job once
  int64_t pending_ = 0;      // workers still running the current job
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> threads_;
};

}  // namespace ddpbench::runtime
