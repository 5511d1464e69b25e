// worker_group.h — the launching parent's side of a local multi-process run: spawn K workers of
// this binary with torchrun-style variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) pointing at a store this process hosts on a free port, watch their progress, and
// reap every one of them. A worker that exits non-zero, dies by a signal, or makes no progress
// within the timeout stops the whole group (TERM, then KILL) and is reported by rank with the
// tail of its stderr. Ctrl-C tears everything down too. No orphans: workers also die with the
// parent (PR_SET_PDEATHSIG). Nothing left behind: the workers' folder and their shared-memory
// segments (named from a prefix this parent chose, comm/shm_names.h) are removed however the run
// ends, and what a parent killed outright left the next one reclaims (launch/stale_reclaim.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "errors.h"

namespace ddpbench::comm {
class Store;
}

namespace ddpbench::launch {

class RankZygote;

struct WorkerGroupOptions {
  int world_size = 1;
  // Address workers use to reach this parent's store (and rank 0's gloo pairs).
  std::string master_addr = "127.0.0.1";
  // A rank that reports no progress for this long is declared hung.
  std::chrono::milliseconds progress_timeout{std::chrono::minutes(5)};
  // Command line of each worker (argv[0] becomes ddpbench-rankR; the binary is this one).
  std::vector<std::string> argv;
  // Extra "NAME=value" entries for every worker's environment.
  std::vector<std::string> extra_env;
  // Forks the workers without exec where set (rank_zygote.h); null: fork and exec.
  RankZygote* zygote = nullptr;
  // Who issues collectives past the ranks' flight recorders, for the analysis of a failed group
  // (launch/flight_analysis.h); "" when every collective is recorded.
  std::string unrecorded_collectives;
  // Called with the number of steps rank 0 has completed (progress display).
  std::function<void(int64_t steps_done)> on_rank0_steps;
};

// Store keys shared by parent and workers.
std::string progress_key(int rank);
inline constexpr const char* kResultKey = "ddpbench/result";

// Rank 0 of a spawned world hands its result (tens of MB: the final state) to the parent: the
// bytes go to the file the parent named in kResultFileEnv (written whole, then renamed), and
// only their size goes through the store under kResultKey, since the store takes small values
// only (comm/store.h).
void send_result(comm::Store& store, const std::string& bytes);

// A group that failed: WorkerFailure's message (the rank and cause, then what the ranks' flight
// recorders say, launch/flight_analysis.h) and failure.json's bytes for the run to leave in its
// --out: the message and every rank's last collectives.
class GroupFailure : public WorkerFailure {
 public:
  GroupFailure(const std::string& message, std::string failure_json)
      : WorkerFailure(message), failure_json_(std::move(failure_json)) {}
  const std::string& failure_json() const { return failure_json_; }

 private:
  std::string failure_json_;
};

// Spawns the workers, supervises them to the end and returns rank 0's result bytes (what it
// passed to send_result). Throws GroupFailure (exit 3) naming the rank and cause when a rank
// fails or hangs, WorkerFailure when rank 0 sends no result; in every case all workers are gone
// when it returns or throws. A signal meanwhile is SignalCleanup's:
// the workers and the group's temporary folder are registered with it.
std::string run_worker_group(const WorkerGroupOptions& options);

}  // namespace ddpbench::launch
