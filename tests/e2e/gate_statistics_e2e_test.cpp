// gate_statistics_e2e_test.cpp — issue 54 through the real binary: `run --repeats` keeps every
// timed step of every repeat and the figures computed from them; a rank slowed by the `slow`
// fault is `slower` with a significant interval, an identical run never is; `history` finds a
// step where it starts and calls it a regression, one outlier commit suspicious; `gate --history`
// judges against the lookback (never the current run itself, issue 73 C8); a step two commits
// from the end is placed where it starts, one run is insufficient data, the same run twice and
// -0 are refused; and each misuse is refused, exit 2, one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli_runner.h"
#include "support/retimed_report.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class GateStatistics : public testing::TempDirTest {
 protected:
  // linear_mse, ddp at 2 ranks, perf only, 5 repeats of 10 timed steps (a few seconds).
  std::string timed_run(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run",     "--scenario", "linear_mse", "--modes",
                                     "ddp",     "--gpus",     "2",          "--perf-only",
                                     "--steps", "10",         "--repeats",  "5",
                                     "--quiet", "--out",      path(name)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return path(name) + "/report.json";
  }
  // The report the synthetic series are made from (their steps are replaced): one timed run for
  // the suite's history tests.
  const nlohmann::json& series_base() {
    static const nlohmann::json base = testing::read_json(timed_run("base"));
    return base;
  }
  // `base` with 5 repeats of 10 steps at `level` seconds, +-2% in a fixed pattern: a machine's
  // noise without its chance, so that what the series decides is the test's to state.
  static nlohmann::json at_level(const nlohmann::json& base, double level) {
    std::vector<std::vector<double>> steps(5);
    for (int r = 0; r < 5; ++r) {
      for (int s = 0; s < 10; ++s)
        steps[r].push_back(level * (1 + 0.01 * ((r * 7 + s * 3) % 5 - 2)));
    }
    nlohmann::json doc = base;
    testing::set_step_times(doc["results"][0], steps);
    return doc;
  }
  // A series of commits c00, c01, ... in `dir`, each `base` at 1 ms times its factor, each a run
  // of its own (its own start time: the same run twice is refused).
  void write_series(const std::string& dir, const nlohmann::json& base,
                    const std::vector<double>& factors) {
    fs::create_directories(path(dir));
    for (size_t i = 0; i < factors.size(); ++i) {
      nlohmann::json doc = at_level(base, 1e-3 * factors[i]);
      doc["context"]["started_at"] =
          "2026-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "Z";
      std::ofstream(path(dir) + "/c" + (i < 10 ? "0" : "") + std::to_string(i) + ".json")
          << doc.dump();
    }
  }
  static void expect_refused(const testing::ProcessResult& r, const std::string& named) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  }
};

TEST_F(GateStatistics, RepeatsAreKeptAndASlowRankIsSignificantlySlower) {
  const std::string base = timed_run("base");
  const nlohmann::json doc = testing::read_json(base);
  const auto& t = doc["results"][0]["throughput"];
  ASSERT_EQ(t["repeats"].size(), 5u);
  for (const auto& r : t["repeats"]) EXPECT_EQ(r["step_times_s"].size(), 10u);
  EXPECT_EQ(t["spread"]["repeats"], 5);
  EXPECT_EQ(t["timed_steps"], 50);
  EXPECT_EQ(doc["config"]["repeats"], 5);
  // 20 ms more per step on rank 1: many times linear_mse's step, in every repeat.
  const std::string slow = timed_run("slow", {"--inject-fault", "slow:rank=1,ms=20"});
  const auto judged = ddpbench({"gate", "--baseline", base, "--current", slow});
  EXPECT_EQ(judged.exit_code, 1) << judged.out << judged.err;
  EXPECT_NE(judged.out.find("slower: "), std::string::npos) << judged.out;
  EXPECT_NE(judged.out.find("significantly slower"), std::string::npos) << judged.out;
  // The same run against itself: never slower (ok, or undecided on a noisy machine).
  const auto same = ddpbench({"gate", "--baseline", base, "--current", base, "--allow-undecided"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_EQ(same.out.find("slower"), std::string::npos) << same.out;
  // report.html shows the spread of the repeats.
  const std::ifstream html(path("base") + "/report.html");
  std::stringstream page;
  page << html.rdbuf();
  EXPECT_NE(page.str().find("id=\"repeats\""), std::string::npos);
}

TEST_F(GateStatistics, HistoryFindsAStepAndGateHistoryJudgesAgainstTheLookback) {
  const nlohmann::json& base = series_base();
  write_series("step", base, {1, 1, 1, 1, 1, 1.1, 1.1, 1.1, 1.1, 1.1});
  const auto step = ddpbench({"history", path("step"), "--out", path("h")});
  EXPECT_EQ(step.exit_code, 1) << step.out << step.err;
  EXPECT_NE(step.out.find("regression"), std::string::npos) << step.out;
  EXPECT_NE(step.out.find("change point at c05"), std::string::npos) << step.out;
  for (const char* f : {"history.txt", "history.csv", "history.html"}) {
    EXPECT_TRUE(fs::exists(path("h") + "/" + f)) << f;
  }
  std::ifstream csv(path("h") + "/history.csv");
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 11);  // the header and one row per commit

  write_series("outlier", base, {1, 1, 1, 1, 1.3, 1, 1, 1, 1, 1});
  const auto outlier = ddpbench({"history", path("outlier"), "--out", path("h2")});
  EXPECT_EQ(outlier.exit_code, 0) << outlier.out << outlier.err;
  EXPECT_NE(outlier.out.find("suspicious"), std::string::npos) << outlier.out;
  EXPECT_NE(outlier.out.find("no change point"), std::string::npos) << outlier.out;

  // Against the earlier commits' lookback: a current run 10% slower is slower.
  std::ofstream(path("current.json")) << at_level(base, 1.1e-3).dump();
  write_series("earlier", base, {1, 1, 1, 1});
  const auto gated =
      ddpbench({"gate", "--history", path("earlier"), "--current", path("current.json")});
  EXPECT_EQ(gated.exit_code, 1) << gated.out << gated.err;
  EXPECT_NE(gated.out.find("significantly slower"), std::string::npos) << gated.out;
}

// Issue 73 C8 through the binary: a slowdown from the fifth of six commits is a change point
// there (it was "change point at c03", a commit early); one run is insufficient data, exit 0 (it
// was refused); the same run twice is refused; `gate --history` leaves the current run out of its
// own lookback, says so, and shows the lookback's samples/s as its baseline; -0 is no fraction.
TEST_F(GateStatistics, HistoryEdgesAndWhatTheGateComparesWith) {
  const nlohmann::json& base = series_base();
  write_series("late", base, {1, 1, 1, 1, 1.3, 1.3});
  const auto late = ddpbench({"history", path("late"), "--out", path("h")});
  EXPECT_EQ(late.exit_code, 1) << late.out << late.err;
  EXPECT_NE(late.out.find("change point at c04"), std::string::npos) << late.out;
  EXPECT_NE(late.out.find("from 'c04'"), std::string::npos) << late.out;

  const auto one = ddpbench({"history", path("late/c00.json"), "--out", path("h1")});
  EXPECT_EQ(one.exit_code, 0) << one.out << one.err;
  EXPECT_NE(one.out.find("insufficient data"), std::string::npos) << one.out;

  expect_refused(ddpbench({"history", path("late/c00.json"), path("late/c01.json"),
                           path("late/c00.json"), "--out", path("h2")}),
                 "are the same run");
  EXPECT_FALSE(fs::exists(path("h2")));

  // The current run is c05 of the history: left out, so c00..c04 are the earlier runs (c04, slower
  // than its own lookback, is not pooled) and the baseline column is the lookback's 1 ms.
  const auto gated =
      ddpbench({"gate", "--history", path("late"), "--current", path("late/c05.json")});
  EXPECT_EQ(gated.exit_code, 1) << gated.out << gated.err;
  EXPECT_NE(gated.out.find("left out 'c05': it is the current run"), std::string::npos)
      << gated.out;
  EXPECT_NE(gated.out.find("checks against the newest earlier run 'c04'"), std::string::npos)
      << gated.out;
  EXPECT_NE(gated.out.find("lookback/s"), std::string::npos) << gated.out;
  EXPECT_NE(gated.out.find("-23.1%"), std::string::npos) << gated.out;  // 1 / 1.3 - 1
  EXPECT_NE(gated.out.find("significantly slower"), std::string::npos) << gated.out;

  for (const char* command : {"gate", "history"}) {
    std::vector<std::string> args = {command, "--max-slowdown", "-0"};
    if (std::string(command) == "gate") {
      args.insert(args.end(), {"--history", path("late"), "--current", path("late/c05.json")});
    } else {
      args.insert(args.end(), {path("late"), "--out", path("h3")});
    }
    expect_refused(ddpbench(args), "no minus sign");
  }
}

TEST_F(GateStatistics, MisusesAreRefused) {
  const std::vector<std::string> run = {"run", "--scenario", "linear_mse", "--gpus",
                                        "2",   "--out",      path("never")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return ddpbench(args);
  };
  expect_refused(with({"--repeats", "3", "--check-only"}), "--repeats");
  expect_refused(with({"--inject-fault", "slow:rank=0,ms=5", "--check-only"}), "drop --check-only");
  expect_refused(with({"--inject-fault", "slow:rank=0"}), "ms is missing");
  expect_refused(with({"--inject-fault", "slow:rank=0,ms=-1"}), "bad value");
  expect_refused(with({"--repeats", "0"}), "--repeats");
  EXPECT_FALSE(fs::exists(path("never")));
  expect_refused(ddpbench({"history", path("nothing-here")}), "history");
  expect_refused(ddpbench({"gate", "--current", path("x.json")}), "--history");
}

}  // namespace
}  // namespace ddpbench
