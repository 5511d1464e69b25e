// watched_queue.cpp — see watched_queue.h.
#include "comm/watched_queue.h"

#include <utility>

namespace ddpbench::comm {

WatchedQueue::WatchedQueue(std::chrono::milliseconds timeout, StallHandler on_stall)
    : timeout_(timeout), on_stall_(std::move(on_stall)), thread_([this] { loop(); }) {
  if (timeout_.count() > 0) watchdog_ = std::thread([this] { watch(); });
}

WatchedQueue::~WatchedQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    watch_stopping_ = true;
  }
  watch_cv_.notify_one();
  if (watchdog_.joinable()) watchdog_.join();
}

std::shared_future<void> WatchedQueue::submit(const char* name, std::function<void()> op) {
  std::packaged_task<void()> task(std::move(op));
  std::shared_future<void> done = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({name, std::move(task)});
  }
  cv_.notify_one();
  return done;
}

void WatchedQueue::loop() {
  for (;;) {
    Queued next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      next = std::move(queue_.front());
      queue_.pop_front();
      running_ = next.name;
      running_since_ = Clock::now();
    }
    next.task();  // exceptions land in the task's future, never escape the thread
    const std::lock_guard<std::mutex> lock(mu_);
    running_ = nullptr;
  }
}

// Every 100 ms: has the running operation outlived the timeout? An MPI collective that has will
// not end by itself.
void WatchedQueue::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!watch_cv_.wait_for(lock, std::chrono::milliseconds(100),
                             [this] { return watch_stopping_; })) {
    if (running_ == nullptr) continue;
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - running_since_);
    if (waited <= timeout_) continue;
    const std::string name = running_;
    lock.unlock();
    on_stall_(name, waited);
    return;  // once: the handler ends the job (or, in a test, has seen what it needed)
  }
}

}  // namespace ddpbench::comm
