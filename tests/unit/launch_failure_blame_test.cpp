// launch_failure_blame_test.cpp — the parent blames the rank that caused a group's failure, not
// a peer that died of it: a rank killed by SIGPIPE (writing to the dead rank's socket) or exiting
// kExitPeerLost is a consequence, whatever order the parent reaped the exits in.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "errors.h"
#include "launch/failure_blame.h"

namespace ddpbench::launch {
namespace {

int exited(int code) { return W_EXITCODE(code, 0); }
int killed(int sig) { return W_EXITCODE(0, sig); }

TEST(FailureBlame, ABrokenPipeIsAConsequenceNotACause) {
  EXPECT_TRUE(lost_a_peer(killed(SIGPIPE)));
  EXPECT_TRUE(lost_a_peer(exited(kExitPeerLost)));
  EXPECT_FALSE(lost_a_peer(killed(SIGSEGV)));
  EXPECT_FALSE(lost_a_peer(exited(kExitWorkerFailed)));
  EXPECT_FALSE(failed_exit(exited(0)));
  EXPECT_TRUE(failed_exit(killed(SIGKILL)));
}

// The failure CI saw: rank 1's injected crash (exit 3) reaped after rank 0's SIGPIPE.
TEST(FailureBlame, TheCrashedRankIsBlamedWhenItsPeerDiedFirstOfABrokenPipe) {
  const std::vector<RankExit> exits = {{0, killed(SIGPIPE), 0}, {1, exited(kExitWorkerFailed), 1}};
  ASSERT_NE(choose_culprit(exits), nullptr);
  EXPECT_EQ(choose_culprit(exits)->rank, 1);
  const std::vector<RankExit> lost = {{0, exited(kExitPeerLost), 0}, {2, killed(SIGSEGV), 1}};
  EXPECT_EQ(choose_culprit(lost)->rank, 2);
}

TEST(FailureBlame, AmongCausesOrAmongConsequencesTheFirstSeenIsBlamed) {
  const std::vector<RankExit> causes = {{0, exited(kExitWorkerFailed), 1}, {3, killed(SIGSEGV), 0}};
  EXPECT_EQ(choose_culprit(causes)->rank, 3);
  const std::vector<RankExit> consequences = {{1, killed(SIGPIPE), 2},
                                              {2, exited(kExitPeerLost), 1}};
  EXPECT_EQ(choose_culprit(consequences)->rank, 2);
  const std::vector<RankExit> clean = {{0, exited(0), 0}, {1, exited(0), 1}};
  EXPECT_EQ(choose_culprit(clean), nullptr);
}

}  // namespace
}  // namespace ddpbench::launch
