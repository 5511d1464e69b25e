// shm_segment.cpp — see shm_segment.h.
#include "comm/shm_segment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ddpbench::comm {
namespace {

std::byte* map(int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error(fmt::format("shm: mmap of {} failed: {}", name, std::strerror(errno)));
  }
  return static_cast<std::byte*>(p);
}

// A futex word is 32 bits; std::atomic<uint32_t> is lock-free and address-free on Linux, so the
// kernel and other processes see the same word.
uint32_t* word(const std::atomic<uint32_t>& counter) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return reinterpret_cast<uint32_t*>(const_cast<std::atomic<uint32_t>*>(&counter));
}

}  // namespace

SharedSegment::SharedSegment(std::string name, int fd, std::byte* data, size_t size, bool owns_name)
    : name_(std::move(name)), fd_(fd), data_(data), size_(size), owns_name_(owns_name) {}

SharedSegment SharedSegment::create(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("shm: cannot create {}: {}", name, std::strerror(errno)));
  }
  // ftruncate alone makes a sparse file; touching a page /dev/shm has no room for is SIGBUS.
  const int err = ftruncate(fd, static_cast<off_t>(bytes)) != 0
                      ? errno
                      : posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) {
    close(fd);
    shm_unlink(name.c_str());
    throw std::runtime_error(
        fmt::format("shm: cannot reserve {} MiB in /dev/shm for {}: {} (a container needs a larger "
                    "--shm-size; or use --backend gloo)",
                    bytes >> 20, name, std::strerror(err)));
  }
  std::byte* data = nullptr;
  try {
    data = map(fd, bytes, name);
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    throw;
  }
  flock(fd, LOCK_SH);  // in use while this process lives (Note [Reclaiming what a killed run left])
  return SharedSegment(name, fd, data, bytes, true);
}

SharedSegment SharedSegment::open(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("shm: cannot open {}: {}", name, std::strerror(errno)));
  }
  std::byte* data = nullptr;
  try {
    data = map(fd, bytes, name);
  } catch (...) {
    close(fd);
    throw;
  }
  flock(fd, LOCK_SH);
  return SharedSegment(name, fd, data, bytes, false);
}

SharedSegment::SharedSegment(SharedSegment&& other) noexcept
    : name_(std::move(other.name_)),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owns_name_(std::exchange(other.owns_name_, false)) {}

SharedSegment::~SharedSegment() {
  if (data_ != nullptr) munmap(data_, size_);
  unlink();
  if (fd_ >= 0) close(fd_);
}

void SharedSegment::unlink() {
  if (owns_name_) shm_unlink(name_.c_str());
  owns_name_ = false;
}

bool wait_at_least(const std::atomic<uint32_t>& counter, uint32_t target,
                   std::chrono::steady_clock::time_point deadline,
                   const std::atomic<bool>& cancelled) {
  // Counters only grow; the difference keeps working when they wrap.
  const auto reached = [&](uint32_t v) { return static_cast<int32_t>(v - target) >= 0; };
  // A peer that is a few microseconds behind is cheaper to spin for than to sleep for.
  for (int i = 0; i < 2000; ++i) {
    if (reached(counter.load(std::memory_order_acquire))) return true;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  for (;;) {
    const uint32_t seen = counter.load(std::memory_order_acquire);
    if (reached(seen)) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || cancelled.load(std::memory_order_relaxed)) return false;
    // Sleep while the word still holds `seen`; wake-ups come from publish(). The slice bounds how
    // late a deadline is noticed.
    const auto slice =
        std::min<std::chrono::nanoseconds>(deadline - now, std::chrono::milliseconds(100));
    timespec ts{static_cast<time_t>(slice.count() / 1000000000),
                static_cast<long>(slice.count() % 1000000000)};
    syscall(SYS_futex, word(counter), FUTEX_WAIT, seen, &ts, nullptr, 0);
  }
}

void publish(std::atomic<uint32_t>& counter, uint32_t value) {
  counter.store(value, std::memory_order_release);
  syscall(SYS_futex, word(counter), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace ddpbench::comm
