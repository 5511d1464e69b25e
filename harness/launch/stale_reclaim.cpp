// stale_reclaim.cpp — see stale_reclaim.h.
#include "launch/stale_reclaim.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <system_error>

#include "comm/shm_names.h"

namespace ddpbench::launch {
namespace {
namespace fs = std::filesystem;

// ddpbench-<kind>-<pid>-XXXXXX, as OwnedTempDir names them (mkdtemp's six characters).
pid_t temp_dir_owner(const std::string& name) {
  static const std::regex pattern("ddpbench-[a-z]+-([0-9]+)-[A-Za-z0-9]{6}");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return -1;
  return static_cast<pid_t>(std::stol(m[1].str()));
}

int reclaim_temp_dirs() {
  int removed = 0;
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return 0;
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    if (!e.is_directory(ec) || e.is_symlink(ec)) continue;
    if (is_stale(e.path().string(), temp_dir_owner(e.path().filename().string()))) {
      std::error_code rm;
      if (fs::remove_all(e.path(), rm) > 0) ++removed;
    }
  }
  return removed;
}

int reclaim_shm_segments() {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(comm::kShmDir, ec)) {
    const std::string name = e.path().filename().string();
    if (is_stale(e.path().string(), comm::shm_segment_owner(name)) &&
        shm_unlink(("/" + name).c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
}

}  // namespace

bool is_stale(const std::string& path, pid_t owner) {
  if (owner <= 0 || kill(owner, 0) == 0 || errno != ESRCH) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  // The lock taken here goes with the descriptor.
  const bool unlocked = flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return unlocked;
}

OwnedTempDir::OwnedTempDir(const std::string& kind) {
  std::string tmp =
      (fs::temp_directory_path() / fmt::format("ddpbench-{}-{}-XXXXXX", kind, getpid())).string();
  if (mkdtemp(tmp.data()) == nullptr) {
    throw std::runtime_error(fmt::format("cannot create a temporary directory under {}: {}",
                                         fs::temp_directory_path().string(), std::strerror(errno)));
  }
  path_ = tmp;
  // Close-on-exec: the lock is this process's, not its workers' (they die with it anyway).
  lock_fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
}

OwnedTempDir::~OwnedTempDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

int reclaim_stale_leftovers() { return reclaim_temp_dirs() + reclaim_shm_segments(); }

}  // namespace ddpbench::launch
