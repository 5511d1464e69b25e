// shared_checks.h — the checks `run` (and `scale`) and `comm` share, one definition each, so the
// same flag cannot mean different things in two subcommands: the --timeout bounds and how many
// ranks one machine may host.
#pragma once

#include <chrono>
#include <cstdint>

namespace ddpbench::run {

// --timeout as milliseconds; InputError outside [kMinTimeoutSeconds, kMaxTimeoutSeconds]
// (input_bounds.h) or not finite.
std::chrono::milliseconds checked_timeout(double seconds);

// The ranks a self-launched run may start on a machine of `cores` cores: InputError past
// max(8, 4 per core) without --oversubscribe, and past 1024 at all.
void check_rank_count(int64_t world_size, int64_t cores, bool oversubscribe);

// Cores of this machine (at least 1).
int64_t machine_cores();

// Intra-op threads per process: --threads, or the cores shared out over the ranks.
int64_t threads_per_process(const requests::RunRequest& request, int64_t world_size);

}  // namespace ddpbench::run
