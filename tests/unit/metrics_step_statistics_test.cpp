// metrics_step_statistics_test.cpp — the formulas behind the throughput figures.
#include <gtest/gtest.h>

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
