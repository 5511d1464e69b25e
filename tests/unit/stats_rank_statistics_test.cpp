// stats_rank_statistics_test.cpp — the gate's statistics against known values: scipy 1.17.1's
// mannwhitneyu (method='exact' and 'asymptotic', two-sided) on fixed vectors, and the
// Hodges-Lehmann and median intervals against a brute-force enumeration of the U distribution and
// the binomial, computed once and kept here. Then the gate's decision on constructed repeats.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/rank_statistics.h"
#include "stats/speed_change.h"
#include "stats/timing_spread.h"

namespace ddpbench::stats {
namespace {

const std::vector<double> kX = {1.1, 2.3, 0.7, 4.2, 3.3};
const std::vector<double> kY = {5.1, 6.0, 4.4, 7.2, 5.5, 3.9};

TEST(RankStatistics, MannWhitneyExactMatchesScipy) {
  const MannWhitney r = mann_whitney(kX, kY);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 1.0);
  EXPECT_NEAR(r.p_value, 0.008658008658008658, 1e-12);
  // Interleaved and fully separated samples of five.
  EXPECT_NEAR(mann_whitney({1, 2, 3, 4, 5}, {1.5, 2.5, 3.5, 4.5, 5.5}).p_value, 0.6904761904761905,
              1e-12);
  EXPECT_NEAR(mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_value, 0.007936507936507936, 1e-12);
}

TEST(RankStatistics, MannWhitneyAsymptoticMatchesScipyWithTiesAndLargeSamples) {
  // Ties force the normal approximation (tie-corrected variance, continuity correction).
  const MannWhitney ties = mann_whitney({3, 1, 2, 2, 5, 4, 4}, {2, 6, 7, 4, 8, 9, 5, 6});
  EXPECT_FALSE(ties.exact);
  EXPECT_DOUBLE_EQ(ties.u, 7.5);
  EXPECT_NEAR(ties.p_value, 0.01951748118217775, 1e-12);
  // Samples beyond kExactLimit (60 and 55, scipy's normal draws rounded to 6 digits).
  const std::vector<double> xs = {
      10.345584, 10.821618, 10.330437, 8.696843,  10.905356, 10.446375, 9.463047,  10.581118,
      10.364572, 10.294132, 10.028422, 10.546713, 9.263546,  9.83709,   9.517881,  10.598846,
      10.039722, 9.707543,  9.218092,  9.742808,  10.008142, 9.724397,  11.294064, 11.006724,
      7.288838,  8.110987,  9.825228,  9.57781,   10.213643, 10.217322, 12.117839, 8.887979,
      9.622395,  12.042772, 10.646703, 10.663063, 9.485994,  8.351925,  10.167465, 10.109014,
      8.772648,  9.316773,  9.927956,  9.055248,  9.90173,   10.095483, 10.035586, 9.493708,
      10.593748, 10.891167, 10.320848, 9.18177,   10.731652, 9.49856,   10.879161, 8.928213,
      10.914467, 9.979937,  8.751251,  9.686101};
  const std::vector<double> ys = {
      10.554102, 10.772791, 9.517812,  9.392627,  10.699585, 10.03325,  10.735506, 11.25952,
      8.851213,  10.754388, 11.724647, 10.202473, 9.689185,  11.252244, 10.753447, 11.395883,
      10.154784, 9.018182,  10.389989, 10.054172, 11.275324, 10.693633, 8.869151,  9.304837,
      11.383789, 11.179765, 9.859757,  10.498951, 10.945574, 10.968404, 11.376242, 10.756486,
      10.405172, 10.241152, 11.555743, 8.249146,  10.361345, 10.533,    9.074651,  10.832814,
      9.848719,  11.362445, 10.374408, 11.169153, 11.718844, 10.88293,  9.624279,  8.985681,
      12.253384, 10.388708, 9.811435,  10.644257, 10.308589, 11.352142, 10.533928};
  const MannWhitney large = mann_whitney(xs, ys);
  EXPECT_FALSE(large.exact);
  EXPECT_DOUBLE_EQ(large.u, 1070.0);
  EXPECT_NEAR(large.p_value, 0.001176251692413403, 1e-9);
}

TEST(RankStatistics, UCountsAreTheBinomialCoefficientsSpread) {
  const std::vector<double> c = u_counts(2, 2);  // C(4, 2) = 6 arrangements: U = 0 1 2 2 3 4
  EXPECT_EQ(c, (std::vector<double>{1, 1, 2, 1, 1}));
  double total = 0;
  for (double v : u_counts(5, 6)) total += v;
  EXPECT_DOUBLE_EQ(total, 462);  // C(11, 5)
}

TEST(RankStatistics, HodgesLehmannIntervalMatchesEnumeration) {
  const Shift s99 = hodges_lehmann(kX, kY, 0.99);
  EXPECT_NEAR(s99.estimate, 3.1, 1e-12);
  EXPECT_NEAR(s99.interval.lo, 0.2, 1e-12);
  EXPECT_NEAR(s99.interval.hi, 6.1, 1e-12);
  EXPECT_NEAR(s99.interval.confidence, 0.9913419913419913, 1e-12);
  const Shift s95 = hodges_lehmann(kX, kY, 0.95);
  EXPECT_NEAR(s95.interval.lo, 0.9, 1e-12);
  EXPECT_NEAR(s95.interval.hi, 4.9, 1e-12);
  EXPECT_NEAR(s95.interval.confidence, 0.9696969696969697, 1e-12);
  // Five and five is the least that reaches 99%; four and four cannot.
  const Shift five = hodges_lehmann({1, 2, 3, 4, 5}, {1.5, 2.5, 3.5, 4.5, 5.5}, 0.99);
  EXPECT_NEAR(five.interval.lo, -3.5, 1e-12);
  EXPECT_NEAR(five.interval.hi, 4.5, 1e-12);
  EXPECT_NEAR(five.interval.confidence, 0.9920634920634921, 1e-12);
  const Shift four = hodges_lehmann({1, 2, 3, 4}, {1.5, 2.5, 3.5, 4.5}, 0.99);
  EXPECT_EQ(four.interval.confidence, 0);
  EXPECT_TRUE(std::isinf(four.interval.lo) && std::isinf(four.interval.hi));
}

TEST(RankStatistics, MedianIntervalHasItsBinomialCoverage) {
  const std::vector<double> v = {5, 1, 4, 2, 3, 9, 7, 8, 6, 10};
  EXPECT_DOUBLE_EQ(median(v), 5.5);
  const Interval i95 = median_interval(v, 0.95);
  EXPECT_DOUBLE_EQ(i95.lo, 2);
  EXPECT_DOUBLE_EQ(i95.hi, 9);
  EXPECT_NEAR(i95.confidence, 0.978515625, 1e-12);
  const Interval i99 = median_interval(v, 0.99);
  EXPECT_DOUBLE_EQ(i99.lo, 1);
  EXPECT_DOUBLE_EQ(i99.hi, 10);
  EXPECT_NEAR(i99.confidence, 0.998046875, 1e-12);
  // Too few values for 95%: [min, max] with the confidence it has.
  const Interval three = median_interval({3, 1, 2}, 0.95);
  EXPECT_DOUBLE_EQ(three.lo, 1);
  EXPECT_DOUBLE_EQ(three.hi, 3);
  EXPECT_NEAR(three.confidence, 0.75, 1e-12);
  EXPECT_EQ(median_interval({4}, 0.95).confidence, 0);
}

TEST(TimingSpread, RepeatsAreTheUnitAndStepsArePooledForTheCv) {
  const TimingSpread s = timing_spread({{1, 2, 3}, {4, 4, 4}, {}, {2, 2, 8}});
  EXPECT_EQ(s.repeats, 3);
  EXPECT_EQ(s.repeat_medians, (std::vector<double>{2, 4, 2}));
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.repeat_spread, 1.0);        // (4 - 2) / 2
  EXPECT_NEAR(s.cv, 0.6184658438426489, 1e-12);  // numpy: std(ddof=1) / mean of the 9 steps
}

// Repeat medians around `level` seconds with a fixed +-`spread` pattern (no randomness: the test
// states what each pattern must decide).
std::vector<double> repeats(double level, double spread, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(level * (1 + spread * (static_cast<double>(i % 5) - 2) / 2));
  }
  return out;
}

TEST(SpeedChange, DecidesSlowerOkAndUndecided) {
  // Quiet machine, 10 repeats a side, the current run 10% slower in throughput.
  const SpeedChange slower =
      judge_speed(repeats(1.0, 0.01, 10), repeats(1.0 / 0.9, 0.01, 10), 0.05);
  EXPECT_EQ(slower.verdict, SpeedVerdict::kSlower);
  EXPECT_NEAR(slower.change, -0.10, 0.005);
  EXPECT_LT(slower.p_value, 0.01);
  EXPECT_LE(slower.low, -0.10);
  EXPECT_GE(slower.high, -0.10);
  // The same runs: ok, with an interval around 0 inside the allowance.
  const SpeedChange same = judge_speed(repeats(1.0, 0.01, 10), repeats(1.0, 0.01, 10), 0.05);
  EXPECT_EQ(same.verdict, SpeedVerdict::kOk);
  EXPECT_LE(same.low, 0.0);
  EXPECT_GE(same.high, 0.0);
  EXPECT_GE(same.low, -0.05);
  // A noisy machine: +-20% between repeats hides a 3% change; never ok, and it says how many
  // repeats would decide.
  const SpeedChange noisy = judge_speed(repeats(1.0, 0.2, 6), repeats(1.03, 0.2, 6), 0.05);
  EXPECT_EQ(noisy.verdict, SpeedVerdict::kUndecided);
  EXPECT_GT(noisy.repeats_needed, 6);
  // Four repeats a side cannot give a 99% interval at all.
  const SpeedChange few = judge_speed(repeats(1.0, 0.0, 4), repeats(1.0, 0.0, 4), 0.05);
  EXPECT_EQ(few.verdict, SpeedVerdict::kUndecided);
  EXPECT_EQ(few.repeats_needed, kMinGateRepeats);
  EXPECT_EQ(describe_change(few), "+0.0% (no interval)");
  // Faster is ok.
  EXPECT_EQ(judge_speed(repeats(1.0, 0.01, 8), repeats(0.8, 0.01, 8), 0.05).verdict,
            SpeedVerdict::kOk);
}

TEST(SpeedChange, DescribesTheChangeWithItsInterval) {
  SpeedChange c;
  c.change = -0.021;
  c.low = -0.040;
  c.high = 0.003;
  c.confidence = 0.99;
  EXPECT_EQ(describe_change(c), "-2.1% [-4.0%, +0.3%]");
}

}  // namespace
}  // namespace ddpbench::stats
