// shared_checks.cpp — see shared_checks.h.
#include "run/shared_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "errors.h"
#include "input_bounds.h"

namespace ddpbench::run {
namespace {

// Past these a run stops measuring anything but the scheduler: --gpus 1000 on 2 cores started a
// thousand processes. --oversubscribe lifts the per-core bound up to a hard cap that keeps the
// process table and memory sane.
constexpr int64_t kRanksPerCore = 4;
constexpr int64_t kMinRankLimit = 8;  // `--gpus 8` (the usual GPU node) on any machine
constexpr int64_t kMaxRanks = 1024;

}  // namespace

std::chrono::milliseconds checked_timeout(double seconds) {
  if (!std::isfinite(seconds) || seconds < kMinTimeoutSeconds || seconds > kMaxTimeoutSeconds) {
    throw InputError(
        fmt::format("--timeout {}: pass a number of seconds from {:.0f} to {:.0f} (a "
                    "week)",
                    seconds, kMinTimeoutSeconds, kMaxTimeoutSeconds));
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

void check_rank_count(int64_t world_size, int64_t cores, bool oversubscribe) {
  const int64_t rank_limit = std::max(kMinRankLimit, kRanksPerCore * cores);
  if (world_size > kMaxRanks) {
    throw InputError(fmt::format(
        "--gpus {}: at most {} ranks or replicas on one machine; spread a larger world over "
        "several hosts (torchrun, Slurm or mpirun)",
        world_size, kMaxRanks));
  }
  if (world_size > rank_limit && !oversubscribe) {
    throw InputError(fmt::format(
        "--gpus {}: this machine has {} cores, and more than {} ranks or replicas ({} per core, "
        "at least {}) would time the scheduler, not the work; pass fewer, or add "
        "--oversubscribe to run them anyway",
        world_size, cores, rank_limit, kRanksPerCore, kMinRankLimit));
  }
}

int64_t machine_cores() { return std::max<int64_t>(1, std::thread::hardware_concurrency()); }

int64_t threads_per_process(const requests::RunRequest& request, int64_t world_size) {
  return request.threads > 0
             ? request.threads
             : std::max<int64_t>(1, machine_cores() / std::max<int64_t>(1, world_size));
}

}  // namespace ddpbench::run
