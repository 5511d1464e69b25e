// run_bisect_test.cpp — --bisect: the float64 twin keeps the configuration and the comparison and
// changes only what it must; a first divergence that persists in float64 is called an algorithm
// difference, one that vanishes is called rounding, and a twin that broke says so. When it
// vanishes, the mode's failing checks with a size are `rounding` and the run passes, decided from
// the float64 checks' numbers (Note [Bisect's answer counts]); anything else stays a FAIL.
#include <gtest/gtest.h>

#include "errors.h"
#include "reports/run/divergence_text.h"
#include "run/bisect.h"
#include "support/judged_checks.h"

namespace ddpbench::run {
namespace {

TEST(Bisect, TwinIsTheSameRunInFloat64CheckedTheSameWay) {
  requests::RunRequest r;
  r.scenario = "cifar_resnet18";
  r.world_size = 4;
  r.steps = 7;
  r.batch_size = 24;
  r.inject_fault = "grad:rank=1,step=2,eps=1e-3";
  r.export_batches = true;
  r.bisect = true;
  const requests::RunRequest twin = float64_twin(r, /*lockstep=*/true, "/tmp/x");
  EXPECT_EQ(twin.dtype, "float64");
  EXPECT_EQ(twin.comparison, requests::ComparisonChoice::kLockstep);
  EXPECT_TRUE(twin.check_only);
  EXPECT_FALSE(twin.bisect);
  EXPECT_FALSE(twin.export_batches);
  EXPECT_EQ(twin.out, "/tmp/x");
  EXPECT_EQ(twin.world_size, 4);
  EXPECT_EQ(twin.steps, 7);
  EXPECT_EQ(twin.batch_size, 24);
  EXPECT_EQ(twin.inject_fault, r.inject_fault);
  EXPECT_EQ(float64_twin(r, false, "/tmp/x").comparison, requests::ComparisonChoice::kFree);
}

reports::ModeResult failing(reports::Mode mode) {
  reports::ModeResult m;
  m.mode = mode;
  m.world_size = 2;
  m.first_divergence = {reports::Stage::kGradients, 2, "conv1.weight", 5.8e-4,
                        "normalized error 2e-05"};
  return m;
}

TEST(Bisect, PersistsVanishesOrCouldNotBeDecided) {
  reports::RunReport report;
  report.results = {failing(reports::Mode::kDp), failing(reports::Mode::kDdp)};
  reports::RunReport f64;
  f64.results = {failing(reports::Mode::kDdp)};
  reports::ModeResult dp64;
  dp64.mode = reports::Mode::kDp;
  dp64.world_size = 2;
  dp64.checks = {test::judged_check(reports::Stage::kGradients, reports::CheckStatus::kPass)};
  f64.results.push_back(dp64);
  annotate_bisect(report, f64, 1);
  EXPECT_EQ(report.results[0].first_divergence.bisect, "vanishes");
  EXPECT_NE(report.results[0].first_divergence.bisect_detail.find("rounding"), std::string::npos);
  EXPECT_EQ(report.results[1].first_divergence.bisect, "persists");
  EXPECT_NE(reports::describe_first_divergence(report.results[1].first_divergence)
                .find("in float64 it persists"),
            std::string::npos);

  reports::RunReport broken = report;
  for (auto& r : broken.results) r.first_divergence.bisect.clear();
  annotate_bisect(broken, reports::RunReport{}, 3);
  EXPECT_EQ(broken.results[0].first_divergence.bisect, "could not be decided");
  EXPECT_NE(broken.results[0].first_divergence.bisect_detail.find("code 3"), std::string::npos);
}

// A float32 ddp result whose gradients check failed, with its first divergence there.
reports::ModeResult failing_gradients() {
  reports::ModeResult m = failing(reports::Mode::kDdp);
  m.checks = {test::judged_check(reports::Stage::kLoss, reports::CheckStatus::kPass),
              test::judged_check(reports::Stage::kGradients, reports::CheckStatus::kFail)};
  return m;
}

// The float64 re-run's ddp result with `checks`.
reports::RunReport float64_run(std::vector<reports::CheckRecord> checks) {
  reports::RunReport f64;
  reports::ModeResult ddp;
  ddp.mode = reports::Mode::kDdp;
  ddp.world_size = 2;
  ddp.checks = std::move(checks);
  f64.results = {ddp};
  return f64;
}

// A float64 re-run whose loss and gradients checks passed.
reports::RunReport passing_float64_run() {
  return float64_run({test::judged_check(reports::Stage::kLoss, reports::CheckStatus::kPass),
                      test::judged_check(reports::Stage::kGradients, reports::CheckStatus::kPass)});
}

// What finishing does after annotate_bisect: every status and the verdict from the numbers.
reports::RunReport recomputed(reports::RunReport r) {
  for (auto& m : r.results) {
    for (auto& c : m.checks) c.status = reports::check_status(c, m.first_divergence);
  }
  return test::with_verdict(r);
}

TEST(Bisect, AFailureThatVanishesInFloat64IsRoundingAndPasses) {
  reports::RunReport report;
  report.results = {failing_gradients()};
  annotate_bisect(report, passing_float64_run(), 0);
  const reports::RunReport r = recomputed(report);
  EXPECT_EQ(r.results[0].checks[1].status, reports::CheckStatus::kRounding);
  EXPECT_EQ(r.results[0].checks[0].status, reports::CheckStatus::kPass);
  EXPECT_EQ(r.verdict, reports::Verdict::kPass);
  EXPECT_NO_THROW(reports::require_recomputed(r));
  // The float64 numbers decide, not the word: edited to a failure, the run fails again.
  reports::RunReport edited = r;
  reports::CheckRecord& g64 = edited.results[0].first_divergence.float64_checks[1];
  g64.outside = 1;
  g64.error = 3.0;
  EXPECT_THROW(reports::require_recomputed(edited), InputError);
  g64.status = reports::CheckStatus::kFail;
  EXPECT_EQ(recomputed(edited).verdict, reports::Verdict::kFail);
}

TEST(Bisect, OnlyAFloat64RunThatComparedGradientsAndFailedNothingCounts) {
  const auto verdict_with = [](std::vector<reports::CheckRecord> f64_checks) {
    reports::RunReport report;
    report.results = {failing_gradients()};
    annotate_bisect(report, float64_run(std::move(f64_checks)), 0);
    return recomputed(report).verdict;
  };
  using reports::CheckStatus;
  using reports::Stage;
  // No gradients compared in float64: nothing shows the difference vanished.
  EXPECT_EQ(verdict_with({test::judged_check(Stage::kLoss, CheckStatus::kPass)}),
            reports::Verdict::kFail);
  // A gradients check that compared nothing.
  reports::CheckRecord empty = test::judged_check(Stage::kGradients, CheckStatus::kPass);
  empty.items = 0;
  empty.status = reports::check_status(empty, {});
  EXPECT_EQ(verdict_with({empty}), reports::Verdict::kFail);
  // An exact check failing in float32 is no rounding, whatever float64 says.
  reports::RunReport report;
  report.results = {failing_gradients()};
  reports::CheckRecord ranks;
  ranks.name = Stage::kRanksBitwiseEqual;
  ranks.measure = reports::Measure::kExact;
  ranks.items = 2;
  ranks.outside = 1;
  ranks.error = 1.0;
  report.results[0].checks.push_back(ranks);
  annotate_bisect(report, float64_run({test::judged_check(Stage::kGradients, CheckStatus::kPass)}),
                  0);
  const reports::RunReport r = recomputed(report);
  EXPECT_EQ(r.results[0].checks[2].status, CheckStatus::kFail);
  EXPECT_EQ(r.verdict, reports::Verdict::kFail);
  // A divergence that persists keeps no float64 checks: the failure stays.
  reports::RunReport persists;
  persists.results = {failing_gradients()};
  reports::RunReport f64 = float64_run({});
  f64.results[0] = failing_gradients();
  annotate_bisect(persists, f64, 1);
  EXPECT_TRUE(persists.results[0].first_divergence.float64_checks.empty());
  EXPECT_EQ(recomputed(persists).verdict, reports::Verdict::kFail);
}

// Under autocast (Note [Bisect under autocast]) the twin drops autocast and the GradScaler's
// settings, and a difference that vanishes there is said to come with mixed precision and stays a
// failure.
TEST(Bisect, UnderAutocastTheTwinDropsItAndAVanishingFailureStands) {
  requests::RunRequest r;
  r.amp = "fp16";
  r.grad_scaler_init = "1024";
  r.growth_interval = "3";
  const requests::RunRequest twin = float64_twin(r, /*lockstep=*/false, "/tmp/x");
  EXPECT_EQ(twin.amp, "off");
  EXPECT_TRUE(twin.grad_scaler_init.empty());
  EXPECT_TRUE(twin.growth_interval.empty());

  reports::RunReport report;
  report.config.amp = "bf16";
  report.results = {failing_gradients()};
  annotate_bisect(report, passing_float64_run(), 0);
  const reports::DivergenceRecord& d = report.results[0].first_divergence;
  EXPECT_EQ(d.bisect, "vanishes");
  EXPECT_NE(d.bisect_detail.find("only under --amp bf16"), std::string::npos) << d.bisect_detail;
  EXPECT_TRUE(d.float64_checks.empty());
  const reports::RunReport judged = recomputed(report);
  EXPECT_EQ(judged.results[0].checks[1].status, reports::CheckStatus::kFail);
  EXPECT_EQ(judged.verdict, reports::Verdict::kFail);
}

TEST(Bisect, PassingModesAreLeftAlone) {
  reports::RunReport report;
  reports::ModeResult ok;
  ok.mode = reports::Mode::kDdp;
  report.results = {ok};
  annotate_bisect(report, reports::RunReport{}, 0);
  EXPECT_EQ(report.results[0].first_divergence.bisect, "");
}

}  // namespace
}  // namespace ddpbench::run
