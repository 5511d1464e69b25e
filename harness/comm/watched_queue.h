// watched_queue.h — runs queued operations one at a time, in submission order, on a thread of its
// own, and, given a timeout, watches each from a second thread: one still running after the
// timeout is reported to a handler while it runs. The mpi communicator's thread (its collectives,
// in issue order, which MPI cannot time out or cancel: Note [An MPI job ends by MPI_Abort]). No
// MPI and no torch here, so the watchdog is tested on its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

namespace ddpbench::comm {

class WatchedQueue {
 public:
  // Called on the watchdog's thread, once, with the running operation's name and how long it has
  // run, while it still runs (the queue's thread is blocked in it).
  using StallHandler =
      std::function<void(const std::string& name, std::chrono::milliseconds waited)>;

  // `timeout` zero: no watchdog.
  WatchedQueue(std::chrono::milliseconds timeout, StallHandler on_stall);
  // Drains the queue before joining: every submitted operation still runs (the mpi
  // communicator's peers that issued the same collectives are not left waiting). The watchdog
  // watches the drain too.
  ~WatchedQueue();
  WatchedQueue(const WatchedQueue&) = delete;
  WatchedQueue& operator=(const WatchedQueue&) = delete;

  // The future becomes ready when `op` has run; it carries op's exception, if any. `name` (a
  // string literal: it is kept as a pointer) names the operation to the stall handler.
  std::shared_future<void> submit(const char* name, std::function<void()> op);

 private:
  using Clock = std::chrono::steady_clock;
  struct Queued {
    const char* name = nullptr;
    std::packaged_task<void()> task;
  };
  void loop();
  void watch();

  std::chrono::milliseconds timeout_;
  StallHandler on_stall_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable watch_cv_;
  std::deque<Queued> queue_;
  bool stopping_ = false;
  bool watch_stopping_ = false;
  const char* running_ = nullptr;  // the operation the thread is in; null when idle
  Clock::time_point running_since_;
  std::thread thread_;    // after the members loop() uses: starts once they exist
  std::thread watchdog_;  // started in the constructor's body
};

}  // namespace ddpbench::comm
