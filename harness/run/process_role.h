// process_role.h — whether this process is a worker that a ddpbench parent spawned. The CLI uses
// it to pick an exit code the parent understands (a failed collective in a spawned worker means
// "a peer was lost", so the parent can blame the peer that failed first), and to set the process
// up for its role.
#pragma once

#include <memory>

namespace ddpbench::launch {
class RankZygote;
}

namespace ddpbench::run {

bool is_spawned_worker();

// First thing in main: a spawned worker names itself after its rank (ps, top: "ddpbench-rank1").
void prepare_process(const char* argv0);

// What prepare_launcher leaves to the command: the zygote that forks its ranks, if any. Its end
// stops the zygote.
class LaunchingParent {
 public:
  explicit LaunchingParent(std::unique_ptr<launch::RankZygote> zygote);
  LaunchingParent(LaunchingParent&&) noexcept;
  ~LaunchingParent();
  launch::RankZygote* zygote() const { return zygote_.get(); }

 private:
  std::unique_ptr<launch::RankZygote> zygote_;
};

// Once the command line is parsed, in any process but a spawned worker: the zygote that forks the
// ranks where this process will launch them (`spawns_ranks` and no launcher's variables;
// launch/rank_zygote.h), then the signal handling that cleans up after SIGINT, SIGTERM or SIGHUP
// (launch/signal_cleanup.h). In that order: the zygote needs a process without threads, and the
// signal handling starts one. `entry` (what a rank runs), argc and argv are main's. Throws
// InputError for a DDPBENCH_RANK_START it does not know (launch/rank_zygote.h), before anything.
LaunchingParent prepare_launcher(bool spawns_ranks, int (*entry)(int, char**), int argc,
                                 char** argv);

}  // namespace ddpbench::run
