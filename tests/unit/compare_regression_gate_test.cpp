// compare_regression_gate_test.cpp — the CI gate's decisions: identical runs pass, a failing
// check fails, a check that regressed fails, a slowdown beyond the threshold fails, noise within
// it passes, per-point thresholds apply, missing points, checks and timings fail, other
// configurations and non-finite thresholds are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "compare/gate_thresholds.h"
#include "compare/regression_gate.h"
#include "errors.h"

namespace ddpbench::compare {
namespace {

reports::RunReport run(double ddp_rate, const std::string& ddp_check_status = "pass") {
  reports::RunReport r;
  r.config.scenario = "toy_cnn";
  r.config.dtype = "float32";
  r.config.global_batch = 16;
  reports::ModeResult single;
  single.mode = "single";
  single.throughput.samples_per_s = 1000;
  reports::ModeResult ddp;
  ddp.mode = "ddp";
  ddp.world_size = 2;
  ddp.backend = "gloo";
  ddp.throughput.samples_per_s = ddp_rate;
  ddp.checks.push_back({"gradients", ddp_check_status, 0, 0, "w", 1, "detail"});
  r.results = {single, ddp};
  return r;
}

GatePoint point(const GateResult& g, const std::string& key) {
  for (const auto& p : g.points) {
    if (p.key == key) return p;
  }
  throw std::runtime_error("no point " + key);
}

TEST(RegressionGate, IdenticalRunsPass) {
  const GateResult g = run_gate(run(1800), run(1800), {});
  EXPECT_TRUE(g.passed);
  EXPECT_EQ(g.points.size(), 2u);
  EXPECT_DOUBLE_EQ(point(g, "toy_cnn/ddp/2").delta, 0.0);
}

TEST(RegressionGate, AFailingCheckFails) {
  const GateResult g = run_gate(run(1800, "fail"), run(1800, "fail"), {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "check failed");
}

TEST(RegressionGate, ACheckThatNoLongerPassesFails) {
  const GateResult g = run_gate(run(1800), run(1800, "expected_divergence"), {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "check regressed");
}

TEST(RegressionGate, SlowdownBeyondThresholdFailsNoiseWithinPasses) {
  EXPECT_FALSE(run_gate(run(1800), run(1600), {0.05, {}}).passed);  // -11%
  EXPECT_TRUE(run_gate(run(1800), run(1750), {0.05, {}}).passed);   // -2.8%
  EXPECT_TRUE(run_gate(run(1800), run(2500), {0.05, {}}).passed);   // faster is fine
  // A per-point threshold loosens just that point.
  EXPECT_TRUE(run_gate(run(1800), run(1600), {0.05, {{"toy_cnn/ddp/2", 0.2}}}).passed);
}

TEST(RegressionGate, MissingPointsFail) {
  reports::RunReport current = run(1800);
  current.results.pop_back();
  const GateResult g = run_gate(run(1800), current, {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "missing");
}

TEST(RegressionGate, DifferentConfigurationsAreRefused) {
  reports::RunReport other = run(1800);
  other.config.dtype = "float64";
  EXPECT_THROW(run_gate(run(1800), other, {}), InputError);
  other = run(1800);
  other.results[1].backend = "mpi";
  EXPECT_THROW(run_gate(run(1800), other, {}), InputError);
  other = run(1800);
  other.config.scenario = "linear_mse";
  EXPECT_THROW(run_gate(run(1800), other, {}), InputError);
}

// Every setting that changes the numbers is refused by name, not compared silently.
TEST(RegressionGate, EveryConfigurationDifferenceIsNamed) {
  using Edit = std::function<void(reports::RunReport&)>;
  const std::vector<std::pair<std::string, Edit>> cases = {
      {"--data-dir", [](auto& r) { r.config.data_dir = "/data/cifar"; }},
      {"--ddp-impl", [](auto& r) { r.config.ddp.impl = "naive"; }},
      {"threads per process", [](auto& r) { r.config.threads = 8; }},
      {"seed", [](auto& r) { r.config.seed = 7; }},
      {"steps", [](auto& r) { r.config.steps = 300; }},
      {"device", [](auto& r) { r.context.device = "cuda"; }},
      {"world size", [](auto& r) { r.config.world_size = 4; }},
      {"--bucket-cap-mb", [](auto& r) { r.config.ddp.bucket_cap_bytes = 1; }},
      {"--comm-hook", [](auto& r) { r.config.ddp.comm_hook = "fp16"; }},
      {"warm-up steps", [](auto& r) { r.config.warmup_steps = 9; }},
  };
  for (const auto& [field, edit] : cases) {
    reports::RunReport other = run(1800);
    edit(other);
    try {
      run_gate(run(1800), other, {});
      ADD_FAILURE() << field << ": compared silently";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

TEST(RegressionGate, NonFiniteOrOutOfRangeThresholdsAreRefused) {
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL, -0.1, 1.5}) {
    GateThresholds t;
    t.max_slowdown = bad;
    EXPECT_THROW(run_gate(run(1800), run(180), t), InputError) << bad;
    GateThresholds per_point;
    per_point.point_max_slowdown["toy_cnn/ddp/2"] = bad;
    EXPECT_THROW(run_gate(run(1800), run(180), per_point), InputError) << bad;
  }
}

// A check the baseline ran and the current run lacks (a --perf-only run, a comparison that drops
// the updates check) is a regression unless the user accepts it.
TEST(RegressionGate, ChecksThatVanishedFailUnlessAllowed) {
  reports::RunReport current = run(1800);
  current.results[1].checks.clear();
  const GateResult g = run_gate(run(1800), current, {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "missing");
  EXPECT_NE(point(g, "toy_cnn/ddp/2").detail.find("gradients"), std::string::npos)
      << point(g, "toy_cnn/ddp/2").detail;

  GateThresholds allow;
  allow.allow_missing = true;
  const GateResult allowed = run_gate(run(1800), current, allow);
  EXPECT_TRUE(allowed.passed);
  EXPECT_NE(point(allowed, "toy_cnn/ddp/2").detail.find("gradients"), std::string::npos);
}

// A point the baseline timed and the current run did not (--check-only) cannot be compared.
TEST(RegressionGate, ThroughputThatVanishedFailsUnlessAllowed) {
  const GateResult g = run_gate(run(1800), run(0), {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "missing");
  EXPECT_NE(point(g, "toy_cnn/ddp/2").detail.find("timed"), std::string::npos);
  GateThresholds allow;
  allow.allow_missing = true;
  EXPECT_TRUE(run_gate(run(1800), run(0), allow).passed);
}

TEST(RegressionGate, PerPointThresholdsMustNameBaselinePoints) {
  GateThresholds t;
  t.point_max_slowdown["toy_cnn/ddp/2"] = 0.1;
  EXPECT_NO_THROW(run_gate(run(1800), run(1800), t));
  t.point_max_slowdown["toy_cnn/ddp/4"] = 0.1;
  EXPECT_THROW(run_gate(run(1800), run(1800), t), InputError);
}

TEST(GateThresholds, AFolderOrARepeatedKeyIsRefused) {
  EXPECT_THROW(load_gate_thresholds(::testing::TempDir(), std::nullopt), InputError);
  const std::string path = ::testing::TempDir() + "/gate_thresholds_repeated.yaml";
  std::ofstream(path) << "max_slowdown: 0.1\nmax_slowdown: 0.9\n";
  EXPECT_THROW(load_gate_thresholds(path, std::nullopt), InputError);
  std::ofstream(path) << "points:\n  toy_cnn/ddp/2: 0.1\n  toy_cnn/ddp/2: 0.9\n";
  EXPECT_THROW(load_gate_thresholds(path, std::nullopt), InputError);
}

TEST(GateThresholds, TheFileIsValidatedAndTheCommandLineWins) {
  const std::string path = ::testing::TempDir() + "/gate_thresholds_test.yaml";
  const auto load = [&path](const std::string& yaml, std::optional<double> flag) {
    std::ofstream(path) << yaml;
    return load_gate_thresholds(path, flag);
  };
  GateThresholds t = load("max_slowdown: 0.1\npoints:\n  toy_cnn/ddp/2: 0.25\n", std::nullopt);
  EXPECT_DOUBLE_EQ(t.max_slowdown, 0.1);
  EXPECT_DOUBLE_EQ(t.point_max_slowdown.at("toy_cnn/ddp/2"), 0.25);
  EXPECT_DOUBLE_EQ(load("max_slowdown: 0.1\n", 0.02).max_slowdown, 0.02);  // the flag wins
  EXPECT_DOUBLE_EQ(load("points: {}\n", std::nullopt).max_slowdown, 0.05);
  for (const char* bad :
       {"max_slowdown: -5\n", "max_slowdown: 2\n", "max_slowdwn: 0.1\n", "max_slowdown: .nan\n",
        "points:\n  toy_cnn: 0.1\n", "points:\n  toy_cnn/ddp/two: 0.1\n", "- 0.1\n"}) {
    try {
      load(bad, std::nullopt);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--thresholds"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ddpbench::compare
