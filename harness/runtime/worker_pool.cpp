// worker_pool.cpp — see worker_pool.h.
#include "runtime/worker_pool.h"

#include <stdexcept>

namespace ddpbench::runtime {

WorkerPool::WorkerPool(int64_t size) : size_(size), errors_(static_cast<size_t>(size)) {
  if (size < 1) throw std::logic_error("WorkerPool needs at least one index");
  for (int64_t i = 1; i < size; ++i) threads_.emplace_back([this, i] { work(i); });
}

WorkerPool::~WorkerPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::work(int64_t index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr error;
    try {
      (*job)(index);
    } catch (...) {
      error = std::current_exception();
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    errors_[static_cast<size_t>(index)] = error;
    if (--pending_ == 0) done_.notify_one();
  }
}

void WorkerPool::run(const std::function<void(int64_t i)>& fn) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    pending_ = size_ - 1;
    ++generation_;
  }
  start_.notify_all();
  std::exception_ptr first;
  try {
    fn(0);
  } catch (...) {
    first = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  for (size_t i = 1; i < errors_.size() && !first; ++i) first = errors_[i];
  for (auto& e : errors_) e = nullptr;
  lock.unlock();
  if (first) std::rethrow_exception(first);
}

}  // namespace ddpbench::runtime
