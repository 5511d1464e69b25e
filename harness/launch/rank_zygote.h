// rank_zygote.h — starts a launching parent's ranks by fork, without exec: a copy of the parent
// taken right after its command line was parsed (libtorch loaded, no thread, nothing trained)
// waits for spawn requests and forks one rank per request, which then runs the parent's entry
// point with the rank's argv and environment as an exec'd rank would.
//
// Why: exec'ing ddpbench costs 0.45-0.5 s of CPU before main (Debian's libtorch_cpu brings 298
// libraries to relocate, then registers its operators), and a run starts world-size ranks per
// per-rank mode. Measured on the 2-core CI machine: 946 of the Debian suite's 1,870 starts of a
// program that loads libtorch were ranks, about 450 CPU-seconds of its 1,450 (reports/METRICS.md,
// "Ranks without exec"). The parent itself cannot fork its ranks: by then it has trained single and
// DP, so OpenMP's pool and the signal watcher are running, and a forked copy of a threaded process
// may only exec.
//
// The contracts of worker_group.h hold unchanged: a rank is the parent's own child (the zygote
// forks it through a short-lived middle process, and the parent is a child subreaper, so the rank
// is re-parented to it at once and the parent waits for, signals and blames it as before); it
// dies with the parent (PR_SET_PDEATHSIG, set once the parent is its parent); it ignores SIGINT,
// logs to the file the parent named, and is named ddpbench-rankR in ps (its environment is the
// rank's, but /proc/PID/environ shows the parent's at start: the kernel shows the bytes exec
// placed, and only an exec'd rank has its own). The zygote itself ignores
// SIGINT, dies with the parent, and ends when the parent closes its socket (the destructor) or a
// signal's clean-up stops it. Where it cannot start (the process already has threads, or cannot be
// a subreaper) or stops answering, worker_group.h execs its ranks as before;
// DDPBENCH_RANK_START=exec asks for that outright.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch/signal_cleanup.h"

namespace ddpbench::launch {

// How a launching parent starts its ranks: "fork" (the default, also when unset or empty: forked
// by the zygote where it can start) or "exec" (exec'd even where a zygote could start them).
inline constexpr const char* kRankStartEnv = "DDPBENCH_RANK_START";
enum class RankStart { kFork, kExec };
// kRankStartEnv's value. Throws InputError naming the accepted values for any other, so that a
// misspelt DDPBENCH_RANK_START=exce is not silently a fork.
RankStart rank_start_from_env();

// What the rank runs: the program's entry point (cli::run_app), given the rank's argv.
using RankEntry = int (*)(int argc, char** argv);

struct RankSpawn {
  std::vector<std::string> argv;  // argv[0] names the process (ddpbench-rankR)
  std::vector<std::string> env;   // the rank's whole environment, "NAME=value"
  std::string log_path;           // stdout and stderr go here (created, truncated)
};

class RankZygote {
 public:
  // Forks the zygote. `process_argv` is main's argv: the rank rewrites its bytes so that ps shows
  // the rank's command line. Returns null (ranks are then exec'd) when this process has a second
  // thread, cannot become a child subreaper, or kRankStartEnv says exec (an unknown value throws
  // InputError: rank_start_from_env). Call before
  // SignalCleanup::install(), which starts a thread; call track() after it.
  static std::unique_ptr<RankZygote> start(RankEntry entry, int argc, char** process_argv);

  // Registers the zygote with the signal clean-up (killed and reaped after the ranks).
  void track();

  // Forks a rank; returns its pid, a child of this process, or -1 if the zygote did not answer
  // (it is then stopped, and the caller execs the rank itself).
  pid_t spawn(const RankSpawn& request);

  // Closes the zygote's socket and reaps it.
  ~RankZygote();
  RankZygote(const RankZygote&) = delete;
  RankZygote& operator=(const RankZygote&) = delete;

 private:
  RankZygote(pid_t pid, int socket) : pid_(pid), socket_(socket) {}
  void stop();

  pid_t pid_ = -1;
  int socket_ = -1;
  std::mutex mutex_;  // one request at a time on the socket
  TrackedResource tracked_;
};

}  // namespace ddpbench::launch
