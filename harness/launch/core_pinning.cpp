// core_pinning.cpp — see core_pinning.h.
#include "launch/core_pinning.h"

#include <fmt/format.h>
#include <sched.h>

namespace ddpbench::launch {

std::vector<int> allowed_cores() {
  std::vector<int> cores;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  }
  return cores;
}

std::optional<std::vector<int>> rank_cores(int64_t rank, int64_t world, int64_t threads,
                                           const std::vector<int>& allowed) {
  if (world < 1 || threads < 1 || rank < 0 || rank >= world ||
      world * threads > static_cast<int64_t>(allowed.size())) {
    return std::nullopt;
  }
  const auto first = allowed.begin() + static_cast<std::ptrdiff_t>(rank * threads);
  return std::vector<int>(first, first + static_cast<std::ptrdiff_t>(threads));
}

std::string pinning_description(bool spawned, bool wanted, int64_t world, int64_t threads,
                                const std::vector<int>& allowed) {
  if (!spawned) return "off: the launcher (torchrun, mpirun, Slurm) places the ranks";
  if (!wanted) return "off: --no-pin-cores";
  if (!rank_cores(0, world, threads, allowed)) {
    return fmt::format("off: {} ranks x {} threads exceed the {} usable cores", world, threads,
                       allowed.size());
  }
  return fmt::format("each rank on {} core{} of its own ({} ranks, {} usable cores)", threads,
                     threads == 1 ? "" : "s", world, allowed.size());
}

bool pin_process(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

}  // namespace ddpbench::launch
