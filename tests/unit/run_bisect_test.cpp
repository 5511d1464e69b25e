// run_bisect_test.cpp — --bisect: the float64 twin keeps the configuration and the comparison and
// changes only what it must; a first divergence that persists in float64 is called an algorithm
// difference, one that vanishes is called rounding, and a twin that broke says so.
#include <gtest/gtest.h>

#include "reports/divergence_text.h"
#include "run/bisect.h"
#include "support/judged_checks.h"

namespace ddpbench::run {
namespace {

TEST(Bisect, TwinIsTheSameRunInFloat64CheckedTheSameWay) {
  RunRequest r;
  r.scenario = "cifar_resnet18";
  r.world_size = 4;
  r.steps = 7;
  r.batch_size = 24;
  r.inject_fault = "grad:rank=1,step=2,eps=1e-3";
  r.export_batches = true;
  r.bisect = true;
  const RunRequest twin = float64_twin(r, /*lockstep=*/true, "/tmp/x");
  EXPECT_EQ(twin.dtype, "float64");
  EXPECT_EQ(twin.comparison, "lockstep");
  EXPECT_TRUE(twin.check_only);
  EXPECT_FALSE(twin.bisect);
  EXPECT_FALSE(twin.export_batches);
  EXPECT_EQ(twin.out, "/tmp/x");
  EXPECT_EQ(twin.world_size, 4);
  EXPECT_EQ(twin.steps, 7);
  EXPECT_EQ(twin.batch_size, 24);
  EXPECT_EQ(twin.inject_fault, r.inject_fault);
  EXPECT_EQ(float64_twin(r, false, "/tmp/x").comparison, "free");
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
