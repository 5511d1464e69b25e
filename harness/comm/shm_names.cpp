// shm_names.cpp — see shm_names.h.
#include "comm/shm_names.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <system_error>

namespace ddpbench::comm {

std::string new_shm_run_prefix(pid_t owner) {
  std::random_device rd;
  return fmt::format("{}{}-{:08x}{:08x}", kShmNamePrefix, owner, rd(), rd());
}

std::string shm_segment_name(const std::string& run_prefix, int64_t generation, int rank) {
  return fmt::format("/{}-g{}-r{}", run_prefix, generation, rank);
}

pid_t shm_segment_owner(const std::string& entry_name) {
  const std::string prefix = kShmNamePrefix;
  if (entry_name.compare(0, prefix.size(), prefix) != 0) return -1;
  const char* digits = entry_name.c_str() + prefix.size();
  char* end = nullptr;
  const long pid = std::strtol(digits, &end, 10);
  if (end == digits || *end != '-' || pid <= 0) return -1;
  return static_cast<pid_t>(pid);
}

int remove_shm_segments(const std::string& run_prefix) {
  // The trailing '-' keeps run "...-ab" from matching run "...-abc".
  const std::string mine = run_prefix + "-";
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kShmDir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.compare(0, mine.size(), mine) == 0 && shm_unlink(("/" + name).c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
}

}  // namespace ddpbench::comm
