// run_throughput_test.cpp — the perf-phase record of a mode (run/finish_run.h's throughput_of):
// samples/s from the median step, the mean and the CV beside it, and the weak-figure flag.
#include <gtest/gtest.h>

#include "run/judge_mode.h"

namespace ddpbench::run {
namespace {

training::ModeOutcome timed(std::vector<double> totals) {
  training::ModeOutcome o;
  o.perf_samples_per_step = 10;
  for (double t : totals) o.perf_times.push_back({0, 0, 0, 0, 0, t});
  return o;
}

// Ten steps of 1 s and one of 10 s: the mean (1.82 s) would give 5.5 samples/s, the median 10.
TEST(Throughput, SamplesPerSecondComeFromTheMedianStep) {
  const training::RunSetup setup;
  const reports::ThroughputRecord t =
      throughput_of(setup, timed({1, 1, 1, 1, 1, 10, 1, 1, 1, 1, 1}));
  EXPECT_EQ(t.timed_steps, 11);
  EXPECT_DOUBLE_EQ(t.step_time_p50_s, 1.0);
  EXPECT_DOUBLE_EQ(t.samples_per_s, 10.0);
  EXPECT_NEAR(t.step_time_mean_s, 20.0 / 11.0, 1e-12);
  EXPECT_GT(t.step_time_cv, 1.0);
  ASSERT_EQ(t.weak_reasons.size(), 1u) << "11 steps are enough; the spread is not";
  EXPECT_NE(t.weak_reasons[0].find("CV"), std::string::npos) << t.weak_reasons[0];
}

TEST(Throughput, FiveTimedStepsAreFlaggedAndTwentyEvenOnesAreNot) {
  const training::RunSetup setup;
  const reports::ThroughputRecord five = throughput_of(setup, timed({1, 1, 1, 1, 1}));
  ASSERT_EQ(five.weak_reasons.size(), 1u);
  EXPECT_NE(five.weak_reasons[0].find("5 timed steps (< 10)"), std::string::npos);
  const reports::ThroughputRecord twenty = throughput_of(setup, timed(std::vector<double>(20, 1)));
  EXPECT_TRUE(twenty.weak_reasons.empty());
  EXPECT_DOUBLE_EQ(twenty.step_time_cv, 0.0);
}

}  // namespace
}  // namespace ddpbench::run
