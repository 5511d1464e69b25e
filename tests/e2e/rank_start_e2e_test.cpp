// rank_start_e2e_test.cpp — how a launching ddpbench starts its ranks (launch/rank_zygote.h):
// forked by its zygote, they are its own children, named ddpbench-rankR in ps; with
// DDPBENCH_RANK_START=exec they are exec'd as before and a run still passes. Either way SIGTERM
// stops every process the run started. (That a forked rank sees its own RANK and WORLD_SIZE, which
// /proc/PID/environ does not show, every passing multi-rank run in the suite proves: two ranks
// that both took rank 0 would not pass.) Any other value is refused before anything starts.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {

class RankStart : public testing::TempDirTest {
 protected:
  // Starts a long two-rank DDP run with `env`, waits (up to 120 s) for both ranks to be children
  // of it, prints what the processes look like, stops it with SIGTERM and prints its exit code and
  // whether any process of the run is left:
  //   children: the sorted process names of its children
  //   rank1: rank 1's parent is the run (yes/no) and its command line's first word
  //   exit: the run's exit code
  testing::ProcessResult observe(const std::string& env) {
    const std::string out = path("out");
    const std::string script =
        env + " '" + testing::kDdpbenchBinary +
        "' run --scenario toy_cnn --gpus 2 --modes ddp --steps 3000 --quiet --out '" + out +
        "' >/dev/null 2>&1 & pid=$!\n"
        "for i in $(seq 2400); do [ \"$(pgrep -P $pid ddpbench-rank | wc -l)\" -ge 2 ] && break; "
        "sleep 0.05; done\n"
        "echo \"children: $(for c in $(pgrep -P $pid); do cat /proc/$c/comm; done | sort | "
        "tr '\\n' ' ')\"\n"
        "r1=$(pgrep -P $pid -x ddpbench-rank1)\n"
        "parent=$(awk '/^PPid:/{print $2}' /proc/$r1/status)\n"
        "first=$(tr '\\0' '\\n' < /proc/$r1/cmdline | head -1)\n"
        "echo \"rank1: $([ \"$parent\" = \"$pid\" ] && echo yes || echo no) $first\"\n"
        "kill -TERM $pid; wait $pid; echo \"exit: $?\"\n";
    testing::ProcessResult r = testing::run_process({"bash", "-c", script});
    EXPECT_FALSE(testing::process_alive_with(out)) << "a process of the run outlived it";
    return r;
  }
};

TEST_F(RankStart, RanksForkedByTheZygoteAreTheRunsOwnChildren) {
  const auto r = observe("");
  EXPECT_NE(r.out.find("children: ddpbench-rank0 ddpbench-rank1 ddpbench-zygote \n"),
            std::string::npos)
      << r.out << r.err;
  EXPECT_NE(r.out.find("rank1: yes ddpbench-rank1\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("exit: 143\n"), std::string::npos) << r.out << r.err;
}

TEST_F(RankStart, ExecWhenAskedStartsTheRanksAsBefore) {
  const auto r = observe("DDPBENCH_RANK_START=exec");
  EXPECT_NE(r.out.find("children: ddpbench-rank0 ddpbench-rank1 \n"), std::string::npos)
      << r.out << r.err;
  EXPECT_NE(r.out.find("rank1: yes ddpbench-rank1\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("exit: 143\n"), std::string::npos) << r.out << r.err;

  const auto run = testing::ddpbench({"run", "--scenario", "linear_mse", "--modes", "single,ddp",
                                      "--gpus", "2", "--quiet", "--out", path("passes")},
                                     {"DDPBENCH_RANK_START=exec"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// Issue 73: DDPBENCH_RANK_START=bogus was a fork without a word.
TEST_F(RankStart, AnUnknownWayToStartRanksIsRefusedNamingTheAcceptedOnes) {
  const std::vector<std::vector<std::string>> commands = {
      {"run", "--scenario", "linear_mse", "--gpus", "2", "--out", path("refused")},
      {"comm", "--gpus", "2", "--out", path("refused")}};
  for (const std::vector<std::string>& args : commands) {
    const std::string& command = args.front();
    const auto r = testing::ddpbench(args, {"DDPBENCH_RANK_START=exce"});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("DDPBENCH_RANK_START='exce' is not a way to start ranks: use fork (the "
                         "default: forked by a zygote) or exec, or unset it"),
              std::string::npos)
        << command << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("refused"))) << command;
  }
}

}  // namespace
}  // namespace ddpbench
