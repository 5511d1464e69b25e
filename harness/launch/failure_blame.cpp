// failure_blame.cpp — see failure_blame.h.
#include "launch/failure_blame.h"

#include <signal.h>
#include <sys/wait.h>

#include "errors.h"

namespace ddpbench::launch {

bool lost_a_peer(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status) == kExitPeerLost;
  return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGPIPE;
}

bool failed_exit(int wait_status) {
  return !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0;
}

const RankExit* choose_culprit(const std::vector<RankExit>& exits) {
  const RankExit* culprit = nullptr;
  for (const RankExit& e : exits) {
    if (!failed_exit(e.wait_status)) continue;
    if (culprit == nullptr) {
      culprit = &e;
      continue;
    }
    const bool e_cause = !lost_a_peer(e.wait_status);
    const bool culprit_cause = !lost_a_peer(culprit->wait_status);
    if (e_cause != culprit_cause ? e_cause : e.seen_order < culprit->seen_order) culprit = &e;
  }
  return culprit;
}

}  // namespace ddpbench::launch
