// shm_segment.h — a POSIX shared-memory segment mapped into this process, and the futex waits
// on counters inside one that let ranks of one host hand each other data without a socket
// (comm/shm_communicator.h). The memory is reserved when the segment is created
// (posix_fallocate), so a /dev/shm that is too small fails there with a message, not later with
// SIGBUS in the middle of a collective.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ddpbench::comm {

class SharedSegment {
 public:
  // Creates `name` (which must not exist) with `bytes` reserved, mapped read-write.
  static SharedSegment create(const std::string& name, size_t bytes);
  // Maps an existing segment another process created.
  static SharedSegment open(const std::string& name, size_t bytes);

  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&& other) = delete;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  ~SharedSegment();  // unmaps and closes; unlinks the name too if this process still owns it

  // Removes the name (the mapping stays): once every rank has mapped a segment, nothing is left
  // in /dev/shm however the run ends.
  void unlink();
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  SharedSegment(std::string name, int fd, std::byte* data, size_t size, bool owns_name);
  std::string name_;
  // Kept open with a shared flock while mapped: a later run takes a segment whose owner died
  // for stale only when nobody holds it (launch/stale_reclaim.h).
  int fd_ = -1;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool owns_name_ = false;
};

// Waits until `counter` >= `target` (a counter another process advances), spinning briefly and
// then sleeping in the kernel (futex). Returns false when `deadline` passes or `cancelled` is set
// first (checked at least every 100 ms).
bool wait_at_least(const std::atomic<uint32_t>& counter, uint32_t target,
                   std::chrono::steady_clock::time_point deadline,
                   const std::atomic<bool>& cancelled);
// Stores `value` and wakes every process waiting on `counter`.
void publish(std::atomic<uint32_t>& counter, uint32_t value);

}  // namespace ddpbench::comm
