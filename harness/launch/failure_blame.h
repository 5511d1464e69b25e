// failure_blame.h — which rank of a failed local group caused the failure. When one rank dies
// its peers fail their next collective within moments, so the parent usually sees several
// failed ranks and the first it happens to reap need not be the cause. A rank that lost a peer
// says so: it exits kExitPeerLost, or (a write to a peer's closed socket before SIGPIPE was
// ignored, or a library that restores it) dies of SIGPIPE. The cause is the earliest-seen rank
// that did neither; only when every failed rank lost a peer is the earliest-seen one blamed.
#pragma once

#include <vector>

namespace ddpbench::launch {

struct RankExit {
  int rank = 0;
  int wait_status = 0;  // as waitpid reported it
  int seen_order = 0;   // the order in which the parent reaped the exits, 0 first
};

// True for an exit that is the consequence of another rank's failure, not a cause.
bool lost_a_peer(int wait_status);

// True for an exit that failed the run: non-zero code, or death by a signal.
bool failed_exit(int wait_status);

// The failed exit to blame, or nullptr when none of `exits` failed.
const RankExit* choose_culprit(const std::vector<RankExit>& exits);

}  // namespace ddpbench::launch
