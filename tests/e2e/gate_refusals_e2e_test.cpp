// gate_refusals_e2e_test.cpp — a gate that cannot be fooled, through the real binary: non-finite
// thresholds, checks or timings that vanished, repeated points, empty reports and out-of-range
// fields are refused or failed, never passed; `scale` refuses a repeated world size. Every refusal
// is exit 2 with one line; a regression is exit 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "support/cli_runner.h"
#include "support/retimed_report.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;

class GateRefusals : public testing::TempDirTest {
 protected:
  // A checked and timed 2-rank linear_mse run (a second or two).
  std::string run(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run",     "--scenario", "linear_mse", "--gpus",  "2",
                                     "--steps", "3",          "--out",      path(name)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return path(name) + "/report.json";
  }
  std::string write(const std::string& name, const nlohmann::json& doc) {
    std::ofstream(path(name)) << doc.dump();
    return path(name);
  }
  static void expect_refused(const testing::ProcessResult& r, const std::string& named) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  }
};

// Issue 21 item 1: --max-slowdown nan let a run 10x slower through with PASS.
TEST_F(GateRefusals, NonFiniteMaxSlowdownIsRefused) {
  const std::string base = run("base");
  auto doc = testing::read_json(base);
  for (auto& m : doc["results"]) testing::scale_step_times(m, 10);
  testing::refigure(doc);
  const std::string slow = write("slow.json", doc);
  for (const char* bad : {"nan", "inf", "-inf", "NaN"}) {
    expect_refused(ddpbench({"gate", "--baseline", base, "--current", slow, "--max-slowdown", bad}),
                   "--max-slowdown");
  }
  const auto judged = ddpbench({"gate", "--baseline", base, "--current", slow});
  EXPECT_EQ(judged.exit_code, 1) << judged.out;
  const auto help = ddpbench({"gate", "--help"});
  EXPECT_NE(help.out.find("0.05"), std::string::npos) << help.out;
}

// Item 2: a --perf-only current run has none of the baseline's checks; it passed the gate.
TEST_F(GateRefusals, ChecksThatVanishedFailTheGate) {
  const std::string base = run("base");
  const std::string perf = run("perf", {"--perf-only"});
  const auto g = ddpbench({"gate", "--baseline", base, "--current", perf});
  EXPECT_EQ(g.exit_code, 1) << g.out << g.err;
  EXPECT_NE(g.out.find("missing"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("ran in the baseline and not now"), std::string::npos) << g.out;
  // Accepted, the timings still decide (any slowdown allowed here: this machine is noisy).
  const auto allowed = ddpbench(
      {"gate", "--baseline", base, "--current", perf, "--allow-missing", "--max-slowdown", "1"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  // And the other way round: a --check-only current run (no warm-up either) was not timed.
  const std::string timed = run("timed", {"--warmup", "0"});
  const std::string checked = run("checked", {"--check-only"});
  const auto untimed = ddpbench({"gate", "--baseline", timed, "--current", checked});
  EXPECT_EQ(untimed.exit_code, 1) << untimed.out << untimed.err;
  EXPECT_NE(untimed.out.find("the baseline was timed and this run was not"), std::string::npos)
      << untimed.out;
}

// Item 3: scale accepted --gpus 2,2,1 and the gate matched both ddp/2 points to the first.
TEST_F(GateRefusals, RepeatedPointsAreRefused) {
  const auto scale = ddpbench({"scale", "--scenario", "toy_cnn", "--gpus", "2,2,1", "--steps", "1",
                               "--out", path("scale")});
  expect_refused(scale, "--gpus");
  EXPECT_FALSE(std::filesystem::exists(path("scale")));

  const std::string base = run("base");
  auto doc = testing::read_json(base);
  doc["results"].push_back(doc["results"][1]);
  const std::string twice = write("twice.json", doc);
  expect_refused(ddpbench({"gate", "--baseline", twice, "--current", base}), "ddp/2");
  expect_refused(ddpbench({"gate", "--baseline", base, "--current", twice}), "ddp/2");
  expect_refused(ddpbench({"report", twice, "--out", path("r")}), "ddp/2");
  EXPECT_FALSE(std::filesystem::exists(path("r")));
}

// Item 4: "results": [] was PASS in report (JUnit tests="0") and in the gate.
TEST_F(GateRefusals, AnEmptyReportIsNothingToJudge) {
  auto doc = testing::read_json(run("base"));
  doc["results"] = nlohmann::json::array();
  const std::string empty = write("empty.json", doc);
  expect_refused(ddpbench({"report", empty, "--out", path("r")}), "empty.json");
  expect_refused(ddpbench({"gate", "--baseline", empty, "--current", empty}), "nothing to judge");
  EXPECT_FALSE(std::filesystem::exists(path("r")));
}

// Item 5: world_size 1e30 wrapped to -9223372036854775808 in report.csv.
TEST_F(GateRefusals, OutOfRangeFieldsAreRefusedNamingThem) {
  const std::string base = run("base");
  auto doc = testing::read_json(base);
  doc["results"][1]["world_size"] = 1e30;
  const std::string huge = write("huge.json", doc);
  expect_refused(ddpbench({"report", huge, "--out", path("r")}), "results[1].world_size");
  expect_refused(ddpbench({"gate", "--baseline", base, "--current", huge}),
                 "results[1].world_size");
  EXPECT_FALSE(std::filesystem::exists(path("r")));
}

// Item 11 (gate part) and 14: a thresholds path that is a folder, repeated keys, and a point key
// that names no point of the baseline.
TEST_F(GateRefusals, ThresholdsFileIsValidated) {
  const std::string base = run("base");
  std::filesystem::create_directory(path("folder"));
  expect_refused(
      ddpbench({"gate", "--baseline", base, "--current", base, "--thresholds", path("folder")}),
      "not a regular file");
  std::ofstream(path("twice.yaml")) << "max_slowdown: 0.1\nmax_slowdown: 0.9\n";
  expect_refused(
      ddpbench({"gate", "--baseline", base, "--current", base, "--thresholds", path("twice.yaml")}),
      "twice");
  std::ofstream(path("typo.yaml")) << "points:\n  linear_mse/ddp/4: 0.5\n";
  expect_refused(
      ddpbench({"gate", "--baseline", base, "--current", base, "--thresholds", path("typo.yaml")}),
      "linear_mse/ddp/4");
}

// Issue 31, defect 7: `report` and `gate` believed stored statuses. Each edit of the battery on a
// real report: the verdict is recomputed from the numbers, and a report whose words contradict
// them is refused naming the field.
TEST_F(GateRefusals, EditedReportsAreRecomputedOrRefused) {
  const std::string base = run("base", {"--modes", "single,ddp"});
  const auto doc = testing::read_json(base);
  ASSERT_EQ(doc["verdict"], "pass");
  size_t ddp = 0, gradients = 0;
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    if (doc["results"][i]["mode"] == "ddp") ddp = i;
  }
  const auto& checks = doc["results"][ddp]["checks"];
  for (size_t j = 0; j < checks.size(); ++j) {
    if (checks[j]["name"] == "gradients") gradients = j;
  }
  const std::string check =
      "results[" + std::to_string(ddp) + "].checks[" + std::to_string(gradients) + "]";
  struct Edit {
    std::function<void(nlohmann::json&)> apply;
    std::string field;
  };
  const std::vector<Edit> edits = {
      {[&](auto& j) { j["results"][ddp]["checks"][gradients]["max_abs_diff"] = 1e9; },
       check + ".status"},
      {[&](auto& j) { j["results"][ddp]["losses"][1] = nullptr; }, "verdict"},
      {[&](auto& j) { j["results"][ddp]["first_divergence"]["stage"] = "gradients"; },
       check + ".status"},
      {[&](auto& j) {
         j["results"][ddp]["checks"][gradients]["outside"] = 2;
         j["results"][ddp]["checks"][gradients]["detail"] = "2 of 6 items outside";
       },
       check + ".status"},
      // The timing the gate decides with is recomputed from the step samples (issue 54): an
      // edited median, interval, repeat median or sample count is refused, naming the field.
      {[&](auto& j) {
         auto& s = j["results"][ddp]["throughput"]["spread"]["median_step_s"];
         s = s.template get<double>() * 0.9;
       },
       "results[" + std::to_string(ddp) + "].throughput.spread.median_step_s"},
      {[&](auto& j) { j["results"][ddp]["throughput"]["spread"]["median_low_s"] = 1e-9; },
       "results[" + std::to_string(ddp) + "].throughput.spread.median_low_s"},
      {[&](auto& j) {
         auto& m = j["results"][ddp]["throughput"]["spread"]["repeat_medians_s"][0];
         m = m.template get<double>() * 2;
       },
       "results[" + std::to_string(ddp) + "].throughput.spread.repeat_medians_s[0]"},
      {[&](auto& j) {
         j["results"][ddp]["throughput"]["repeats"][0]["step_times_s"].push_back(1.0);
       },
       "results[" + std::to_string(ddp) + "].throughput.timed_steps"},
  };
  for (const auto& e : edits) {
    auto edited = doc;
    e.apply(edited);
    const std::string file = write("edited.json", edited);
    expect_refused(ddpbench({"report", file, "--out", path("r")}), e.field);
    expect_refused(ddpbench({"gate", "--baseline", base, "--current", file}), e.field);
    EXPECT_FALSE(std::filesystem::exists(path("r")));
  }
  // Prose alone changes nothing: the verdict is the numbers', the same as the run's.
  auto prose = doc;
  prose["results"][ddp]["checks"][gradients]["detail"] = "2 of 6 items outside";
  const auto again = ddpbench({"report", write("prose.json", prose), "--out", path("p")});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
}

// Defect 3: a current run that widened its tolerances by scenario keys, or changed the sampler's
// shuffle, was compared with the baseline (and passed a 10x gradient fault).
TEST_F(GateRefusals, RunsJudgedByOtherRulesAreNotCompared) {
  const std::string base = run("base", {"--modes", "single,ddp"});
  const std::string wide =
      run("wide", {"--modes", "single,ddp", "TOL.GRAD_FLOAT32", "1e6", "TOL.FLOAT32_RTOL", "1e6",
                   "TOL.FLOAT32_ATOL", "1e6", "TOL.FLOAT32_REASON", "wide"});
  expect_refused(ddpbench({"gate", "--baseline", base, "--current", wide}), "differ in config.");
  const std::string unshuffled =
      run("unshuffled", {"--modes", "single,ddp", "TRAIN.SHUFFLE", "true"});
  expect_refused(ddpbench({"gate", "--baseline", base, "--current", unshuffled}),
                 "differ in config.");
}

// Defect 10: single-device training alone, checked only, judged nothing and printed PASS (a run
// that writes a reference state or checkpoints this way is legitimate: it says NOT JUDGED).
TEST_F(GateRefusals, ARunThatJudgesNothingIsNotAPass) {
  for (const bool check_only : {true, false}) {
    const std::string out = path(check_only ? "checked" : "timed");
    std::vector<std::string> args = {"run",     "--scenario", "linear_mse", "--modes", "single",
                                     "--steps", "3",          "--out",      out};
    if (check_only) args.push_back("--check-only");
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("\nPASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NOT JUDGED"), std::string::npos) << r.out;
    const auto doc = testing::read_json(out + "/report.json");
    EXPECT_EQ(doc["verdict"], "not_judged");
    EXPECT_EQ(doc["passed"], false);
  }
  // Two reports that checked and timed nothing: the gate compared nothing, which is no pass.
  const std::string nothing = path("checked") + "/report.json";
  const auto g = ddpbench({"gate", "--baseline", nothing, "--current", nothing});
  EXPECT_EQ(g.exit_code, 1) << g.out << g.err;
  EXPECT_NE(g.out.find("nothing compared"), std::string::npos) << g.out;
}

}  // namespace
}  // namespace ddpbench
