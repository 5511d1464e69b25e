// ab_gate_e2e_test.cpp — `ddpbench ab` (issue 74) through the real binary: both builds run the
// same arguments in rounds within one job, in a drawn, balanced order; ab.json keeps the rounds,
// their order, each side's seconds per step and every round's report of both sides; a build that
// is really slower (the `slow` fault on every step, wrapped as a "build") is `slower` over eight
// paired rounds, also in duet rounds (both builds at once); a build that fails in a duet round is
// named; and each misuse is refused, exit 2, one line, nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class AbGate : public testing::TempDirTest {
 protected:
  // A "build" that is this binary with `extra` appended to every command line.
  std::string wrapped_build(const std::string& name, const std::string& extra) {
    const std::string p = path(name);
    std::ofstream(p) << "#!/bin/sh\nexec " << testing::kDdpbenchBinary << " \"$@\" " << extra
                     << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }
  static std::vector<std::string> run_args() {
    return {"--", "--scenario",  "linear_mse", "--modes", "ddp",    "--gpus",
            "2",  "--perf-only", "--steps",    "5",       "--quiet"};
  }
};

TEST_F(AbGate, ASlowerBuildIsSlowerOnEightPairedRoundsAndEveryRoundIsKept) {
  // 20 ms on every step of rank 0, which rank 1 waits for in every all-reduce: several times the
  // step, so each round's pair differs in the same direction and eight rounds decide it.
  const std::string slow = wrapped_build("slow_build", "--inject-fault slow:rank=0,ms=20");
  std::vector<std::string> args = {
      "ab",    "--baseline-bin", testing::kDdpbenchBinary, "--current-bin", slow, "--rounds", "8",
      "--out", path("ab")};
  const std::vector<std::string> tail = run_args();
  args.insert(args.end(), tail.begin(), tail.end());
  const auto r = ddpbench(args);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("linear_mse/ddp/2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slower: paired shift of the rounds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over 8 paired rounds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gate: FAIL"), std::string::npos) << r.out;

  const nlohmann::json ab = testing::read_json(path("ab") + "/ab.json");
  ASSERT_EQ(ab["rounds"].size(), 8u);
  int current_first = 0;
  for (const auto& round : ab["rounds"]) {
    const auto& order = round["order"];
    ASSERT_EQ(order.size(), 2u);
    EXPECT_NE(order[0], order[1]);
    if (order[0] == "current") ++current_first;
    for (const char* side : {"baseline", "current"}) {
      const std::string report = round[side]["report"];
      EXPECT_TRUE(fs::is_regular_file(path("ab") + "/" + report)) << report;
      EXPECT_GT(round[side]["seconds_per_step"]["linear_mse/ddp/2"].get<double>(), 0);
      // The runner's state while that side ran (Note [A slowdown the load explains]).
      const auto& runner = round[side]["runner"];
      EXPECT_GT(runner["wall_s"].get<double>(), 0);
      EXPECT_GE(runner["others_cpu_share"].get<double>(), 0);
      EXPECT_LE(runner["others_cpu_share"].get<double>(), 1);
    }
    // The wrapped build really ran with its fault: it is slower in every round.
    EXPECT_GT(round["current"]["seconds_per_step"]["linear_mse/ddp/2"].get<double>(),
              round["baseline"]["seconds_per_step"]["linear_mse/ddp/2"].get<double>());
  }
  // The order is drawn and balanced: each side first in four of the eight rounds.
  EXPECT_EQ(current_first, 4);
  ASSERT_EQ(ab["points"].size(), 1u);
  EXPECT_EQ(ab["points"][0]["verdict"], "slower");
  EXPECT_EQ(ab["points"][0]["timing_rule"], "paired rounds");
  EXPECT_LT(ab["points"][0]["p_value"].get<double>(), 0.01);
  EXPECT_FALSE(ab["passed"].get<bool>());
}

// --duet runs both builds of a round at the same time (see Note [Duet rounds]). A build 20 ms
// slower on every rank's step (slowall: what a slower build is) is slower over eight rounds;
// ab.json says each round ran "together", and both sides carry the one runner state measured over
// the round. A build that fails in a duet round ends ab naming its side and exit code, after the
// other side has ended (no process is left behind).
TEST_F(AbGate, DuetRoundsRunBothBuildsAtOnceAndAFailingBuildIsNamed) {
  const std::string slow = wrapped_build("slow_build", "--inject-fault slowall:ms=20");
  std::vector<std::string> args = {
      "ab", "--duet", "--baseline-bin", testing::kDdpbenchBinary, "--current-bin", slow, "--rounds",
      "8",  "--out",  path("ab")};
  const std::vector<std::string> tail = run_args();
  args.insert(args.end(), tail.begin(), tail.end());
  const auto r = ddpbench(args);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("8 duet rounds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slower: paired shift of the rounds"), std::string::npos) << r.out;
  const nlohmann::json ab = testing::read_json(path("ab") + "/ab.json");
  EXPECT_TRUE(ab["duet"].get<bool>());
  ASSERT_EQ(ab["rounds"].size(), 8u);
  for (const auto& round : ab["rounds"]) {
    EXPECT_EQ(round["order"], "together");
    EXPECT_EQ(round["baseline"]["runner"], round["current"]["runner"]);
    EXPECT_GT(round["current"]["seconds_per_step"]["linear_mse/ddp/2"].get<double>(),
              round["baseline"]["seconds_per_step"]["linear_mse/ddp/2"].get<double>());
  }

  const std::string failing = path("failing_build");
  std::ofstream(failing) << "#!/bin/sh\necho 'rank 1 died' >&2\nexit 7\n";
  fs::permissions(failing, fs::perms::owner_all);
  args = {
      "ab",       "--duet", "--baseline-bin", testing::kDdpbenchBinary, "--current-bin", failing,
      "--rounds", "2",      "--out",          path("ab_failed")};
  args.insert(args.end(), tail.begin(), tail.end());
  const auto f = ddpbench(args);
  EXPECT_EQ(f.exit_code, 3) << f.out << f.err;
  EXPECT_NE(f.err.find("round 1, the current run failed with exit code 7: rank 1 died"),
            std::string::npos)
      << f.err;
  EXPECT_FALSE(fs::exists(path("ab_failed") + "/ab.json"));
}

TEST_F(AbGate, MisuseIsOneLineExitTwoAndNothingWritten) {
  const std::string refusing = path("refusing_build");
  std::ofstream(refusing) << "#!/bin/sh\necho 'ddpbench: error: the option --perf-only "
                             "does not exist' >&2\nexit 2\n";
  fs::permissions(refusing, fs::perms::owner_all);
  const std::string self = testing::kDdpbenchBinary;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--baseline-bin", path("nothing_here")}, "is not an executable ddpbench"},
      {{"--baseline-bin", self, "--", "--scenario", "linear_mse", "--out", "x"},
       "give ab --out instead"},
      {{"--baseline-bin", self, "--", "--scenario", "linear_mse", "--repeats=5"},
       "give ab --rounds instead"},
      {{"--baseline-bin", self, "--", "--scenario", "linear_mse", "--check-only"},
       "nothing to pair"},
      {{"--baseline-bin", refusing, "--rounds", "2", "--", "--scenario", "linear_mse",
        "--perf-only"},
       "the baseline build refused the run arguments: ddpbench: error: the option --perf-only"},
      {{"--baseline-bin", self, "--rounds", "1", "--", "--scenario", "linear_mse"}, "--rounds"},
      {{"--rounds", "2"}, "no --baseline-bin"},
      {{"--calibrate", "--baseline-bin", self}, "excludes"},
      {{"--baseline-bin", self, "--calibration", path("nothing.json")},
       "is not a calibration.json of `ab --calibrate`"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"ab", "--out", path("out")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    if (std::find(c.args.begin(), c.args.end(), "--") == c.args.end()) {
      args.insert(args.end(), {"--", "--scenario", "linear_mse", "--perf-only"});
    }
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(path("out"))) << c.says;
  }
}

}  // namespace
}  // namespace ddpbench
