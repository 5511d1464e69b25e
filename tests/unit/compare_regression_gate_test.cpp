// compare_regression_gate_test.cpp — the CI gate's decisions: identical runs pass, a failing
// check fails, a check that regressed fails, a slowdown beyond the threshold fails, noise within
// it passes, per-point thresholds apply, missing points fail, other configurations are refused.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ddpbench::compare
