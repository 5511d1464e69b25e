// metrics_step_statistics_test.cpp — the formulas behind the throughput figures.
#include <gtest/gtest.h>

#include <cmath>

#include "metrics/step_statistics.h"

namespace ddpbench::metrics {
namespace {

TEST(StepStatistics, PercentilesInterpolateLikeNumpy) {
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0.0);
  EXPECT_DOUBLE_EQ(percentile({3.0}, 99), 3.0);
  EXPECT_DOUBLE_EQ(percentile({2.0, 1.0}, 50), 1.5);
  // numpy.percentile([1..10], 90) == 9.1
  EXPECT_NEAR(percentile({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90), 9.1, 1e-12);
  EXPECT_NEAR(percentile({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 99), 9.91, 1e-12);
}

TEST(StepStatistics, SummaryMeansEveryPhase) {
  const StepSummary s = summarize({{1, 2, 3, 4, 5, 15}, {3, 2, 1, 0, 1, 7}});
  EXPECT_EQ(s.steps, 2);
  EXPECT_DOUBLE_EQ(s.mean, 11.0);
  EXPECT_DOUBLE_EQ(s.p50, 11.0);
  EXPECT_DOUBLE_EQ(s.phase_means.data, 2.0);
  EXPECT_DOUBLE_EQ(s.phase_means.comm_wait, 2.0);
  EXPECT_DOUBLE_EQ(s.phase_means.optimizer, 3.0);
}

PhaseTimes step(double total) { return {0, 0, 0, 0, 0, total}; }

// google/benchmark's statistics: mean, median, sample stddev (n - 1), CV = stddev / mean.
TEST(StepStatistics, SummaryHasTheSampleStddevAndTheCoefficientOfVariation) {
  const StepSummary s = summarize({step(1), step(2), step(3), step(4)});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);  // numpy.std([1,2,3,4], ddof=1)
  EXPECT_NEAR(s.cv, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  const StepSummary one = summarize({step(3)});
  EXPECT_DOUBLE_EQ(one.stddev, 0.0);
  EXPECT_DOUBLE_EQ(one.cv, 0.0);
}

// One slow step moves the mean by its whole excess and the median not at all: the run that
// reported DDP at 236% of linear had a single-device mean of 3.2 ms against a median of 1.7 ms.
TEST(StepStatistics, AnOutlierMovesTheMeanAndTheCvButNotTheMedian) {
  const StepSummary s =
      summarize({step(1.7e-3), step(1.7e-3), step(1.7e-3), step(1.7e-3), step(9.2e-3)});
  EXPECT_DOUBLE_EQ(s.p50, 1.7e-3);
  EXPECT_NEAR(s.mean, 3.2e-3, 1e-12);
  EXPECT_GT(s.cv, kMaxStepTimeCv);
}

bool mentions(const std::vector<std::string>& reasons, const std::string& text) {
  for (const auto& r : reasons) {
    if (r.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(StepStatistics, FiguresOnTooFewStepsAreWeak) {
  const auto five = weak_reasons(5, 0.01, 0.9);
  ASSERT_EQ(five.size(), 1u);
  EXPECT_TRUE(mentions(five, "5 timed steps (< 10)")) << five[0];
  EXPECT_TRUE(weak_reasons(kMinTimedSteps, 0.01, 0.9).empty());
  EXPECT_TRUE(weak_reasons(0, 0, -1).empty()) << "nothing timed, nothing to flag";
}

TEST(StepStatistics, FiguresWithAWideSpreadAreWeak) {
  const auto wide = weak_reasons(50, 0.25, -1);
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_TRUE(mentions(wide, "CV 0.25 (> 0.10)")) << wide[0];
  EXPECT_TRUE(weak_reasons(50, kMaxStepTimeCv, -1).empty());
}

TEST(StepStatistics, SuperLinearScalingIsWeak) {
  const auto super = weak_reasons(50, 0.01, 2.36);
  ASSERT_EQ(super.size(), 1u);
  EXPECT_TRUE(mentions(super, "scaling efficiency 236.0% (> 105%)")) << super[0];
  EXPECT_TRUE(weak_reasons(50, 0.01, kMaxPlausibleEfficiency).empty());
  EXPECT_TRUE(weak_reasons(50, 0.01, -1).empty()) << "-1: not measured";
  // Every reason at once, in a fixed order.
  EXPECT_EQ(weak_reasons(5, 0.5, 1.97).size(), 3u);
}

TEST(StepStatistics, MaxOverRanksIsElementwise) {
  const PhaseTimes m = max_of({1, 5, 1, 5, 1, 9}, {2, 4, 2, 4, 2, 8});
  EXPECT_DOUBLE_EQ(m.data, 2);
  EXPECT_DOUBLE_EQ(m.forward, 5);
  EXPECT_DOUBLE_EQ(m.total, 9);
}

TEST(StepStatistics, BusBandwidthFollowsNcclTests) {
  // 1 GB allreduced by 4 ranks in 1 s: algbw 1 GB/s, busbw = 2 * 3/4 = 1.5 GB/s.
  EXPECT_DOUBLE_EQ(allreduce_bus_bandwidth(1'000'000'000, 4, 1.0), 1.5e9);
  EXPECT_DOUBLE_EQ(allreduce_bus_bandwidth(1000, 1, 1.0), 0.0);  // nothing crosses a wire
  EXPECT_DOUBLE_EQ(allreduce_bus_bandwidth(1000, 2, 0.0), 0.0);
}

}  // namespace
}  // namespace ddpbench::metrics
