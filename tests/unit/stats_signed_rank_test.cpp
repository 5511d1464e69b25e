// stats_signed_rank_test.cpp — the paired statistics of `gate --ab` against known values:
// scipy 1.17.1's wilcoxon (zero_method='wilcox', correction=False, method='exact' and 'approx',
// two-sided) on fixed vectors, and the paired Hodges-Lehmann interval against a brute-force
// enumeration of the Walsh averages and of the 2^n sign patterns, computed once and kept here.
// Then the paired decision on rounds with a drifting load, which an unpaired test misreads.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/ab_calibration.h"
#include "stats/load_rule.h"
#include "stats/signed_rank.h"
#include "stats/speed_change.h"

namespace ddpbench::stats {
namespace {

const std::vector<double> kEight = {0.031, -0.012, 0.044, 0.027, 0.008, 0.052, -0.003, 0.019};
const std::vector<double> kTen = {0.11, 0.09, 0.13, -0.02, 0.07, 0.12, 0.10, 0.05, 0.08, 0.14};

TEST(SignedRank, TheNullCountsAreTheSignPatterns) {
  EXPECT_EQ(signed_rank_counts(4), (std::vector<double>{1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1}));
  double total = 0;
  for (double c : signed_rank_counts(12)) total += c;
  EXPECT_DOUBLE_EQ(total, 4096);
}

TEST(SignedRank, ExactMatchesScipy) {
  // scipy reports min(T+, T-); T+ here (n(n+1)/2 - 4 = 32 for the first).
  const SignedRank eight = wilcoxon_signed_rank(kEight);
  EXPECT_TRUE(eight.exact);
  EXPECT_DOUBLE_EQ(eight.t_plus, 32);
  EXPECT_NEAR(eight.p_value, 0.0546875, 1e-12);
  const SignedRank ten = wilcoxon_signed_rank(kTen);
  EXPECT_DOUBLE_EQ(ten.t_plus, 54);
  EXPECT_NEAR(ten.p_value, 0.00390625, 1e-12);
  const SignedRank mixed = wilcoxon_signed_rank(
      {0.004, -0.011, 0.007, 0.002, -0.006, 0.009, -0.001, 0.012, -0.008, 0.003, 0.005, -0.013});
  EXPECT_DOUBLE_EQ(std::min(mixed.t_plus, 78 - mixed.t_plus), 37);
  EXPECT_NEAR(mixed.p_value, 0.90966796875, 1e-12);
}

TEST(SignedRank, TiesZerosAndLargeSamplesTakeScipysNormalApproximation) {
  // Tied magnitudes: the tie-corrected variance.
  const SignedRank ties =
      wilcoxon_signed_rank({0.01, 0.01, -0.02, 0.03, 0.03, 0.03, 0.05, -0.01, 0.02, 0.04});
  EXPECT_FALSE(ties.exact);
  EXPECT_DOUBLE_EQ(std::min(ties.t_plus, 55 - ties.t_plus), 6.5);
  EXPECT_NEAR(ties.p_value, 0.03130779790854022, 1e-12);
  // A zero difference is dropped (scipy's zero_method='wilcox'), so the rest is kEight exactly.
  std::vector<double> with_zero = kEight;
  with_zero.push_back(0.0);
  EXPECT_EQ(wilcoxon_signed_rank(with_zero).n, 8u);
  EXPECT_NEAR(wilcoxon_signed_rank(with_zero).p_value, 0.0546875, 1e-12);
  // 60 differences (numpy's default_rng(7) normal(0.02, 0.05), rounded to 6 digits).
  const std::vector<double> big = {
      0.020062,  0.034937,  0.006293,  -0.02453,  -0.002734, -0.029582, 0.023007,  0.087011,
      -0.00461,  -0.011024, 0.044492,  0.037844,  0.025271,  -0.026523, 0.018537,  0.054765,
      -0.047211, -0.002881, -0.075061, -0.044477, -0.072087, 0.008245,  -0.043372, 0.033563,
      0.027838,  0.010653,  -0.105838, -0.006935, 0.017575,  0.025665,  -0.056507, -0.003888,
      -0.028926, -0.020442, 0.073045,  -0.020377, 0.018374,  0.064219,  -0.00918,  0.014415,
      0.025523,  0.023189,  -0.041253, 0.023807,  0.087941,  -0.057357, 0.062969,  0.025968,
      -0.012074, 0.120021,  0.058113,  -0.039964, 0.023726,  0.048834,  0.010561,  0.054146,
      0.016674,  0.053362,  0.091926,  -0.013783};
  const SignedRank r = wilcoxon_signed_rank(big);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(std::min(r.t_plus, 1830 - r.t_plus), 690);
  EXPECT_NEAR(r.p_value, 0.09764879977658894, 1e-12);
}

TEST(SignedRank, TheIntervalIsTheWalshAveragesOrderStatistics) {
  const Shift e95 = paired_hodges_lehmann(kEight, 0.95);
  EXPECT_NEAR(e95.estimate, 0.02025, 1e-12);
  EXPECT_NEAR(e95.interval.lo, -0.002, 1e-12);
  EXPECT_NEAR(e95.interval.hi, 0.0415, 1e-12);
  EXPECT_NEAR(e95.interval.confidence, 0.9609375, 1e-12);
  const Shift t99 = paired_hodges_lehmann(kTen, 0.99);
  EXPECT_NEAR(t99.estimate, 0.095, 1e-12);
  EXPECT_NEAR(t99.interval.lo, 0.03, 1e-12);
  EXPECT_NEAR(t99.interval.hi, 0.13, 1e-12);
  EXPECT_NEAR(t99.interval.confidence, 0.990234375, 1e-12);
  // Seven rounds cannot reach 99% (2/2^7 > 0.01); eight can.
  EXPECT_EQ(paired_hodges_lehmann({1, 2, 3, 4, 5, 6, 7}, 0.99).interval.confidence, 0);
  EXPECT_GT(paired_hodges_lehmann({1, 2, 3, 4, 5, 6, 7, 8}, 0.99).interval.confidence, 0.99);
}

// Rounds whose load rises through the job: every step time doubles from the first round to the
// last, and current is 1% slower than baseline within each round. Unpaired, the drift swamps the
// 1%; paired, it cancels.
TEST(PairedSpeed, ADriftingLoadCancelsInThePairs) {
  std::vector<double> baseline, current;
  for (int i = 0; i < 12; ++i) {
    const double load = 1 + i / 11.0 + (i % 3) * 0.05;
    baseline.push_back(0.010 * load);
    current.push_back(0.010 * load * (1.01 + 0.001 * (i % 4)));
  }
  const SpeedChange paired = judge_paired_speed(baseline, current, 0.10);
  EXPECT_EQ(paired.verdict, SpeedVerdict::kOk) << describe_change(paired);
  EXPECT_NEAR(paired.change, 1 / 1.0115 - 1, 0.002);
  EXPECT_EQ(judge_speed(baseline, current, 0.10).verdict, SpeedVerdict::kUndecided);
}

// A load step between the sides' measurements: the two-job gate sees a baseline job on an idle
// runner and a current job on a busy one and calls identical code slower; interleaved, each round
// meets the same load on both sides.
TEST(PairedSpeed, ALoadStepBetweenJobsIsSlowerTwoJobButNotInterleaved) {
  std::vector<double> idle, busy, round_base, round_cur;
  for (int i = 0; i < 10; ++i) {
    const double jitter = 1 + 0.004 * ((i * 7) % 5);
    idle.push_back(0.010 * jitter);
    busy.push_back(0.0125 * jitter);  // another job took a quarter of the runner
    // Interleaved: rounds 0-4 idle, 5-9 busy, both sides alike within each round.
    const double load = i < 5 ? 0.010 : 0.0125;
    round_base.push_back(load * jitter);
    round_cur.push_back(load * (1 + 0.004 * ((i * 3) % 5)));
  }
  EXPECT_EQ(judge_speed(idle, busy, 0.10).verdict, SpeedVerdict::kSlower);
  const SpeedChange paired = judge_paired_speed(round_base, round_cur, 0.10);
  EXPECT_EQ(paired.verdict, SpeedVerdict::kOk) << describe_change(paired);
}

TEST(PairedSpeed, ARealSlowdownIsSlowerAndTooFewRoundsAreUndecided) {
  std::vector<double> baseline, current;
  for (int i = 0; i < 10; ++i) {
    const double load = 1 + 0.3 * ((i * 5) % 7) / 7.0;
    baseline.push_back(0.010 * load);
    current.push_back(0.010 * load * (1.15 + 0.002 * (i % 3)));
  }
  const SpeedChange slower = judge_paired_speed(baseline, current, 0.10);
  EXPECT_EQ(slower.verdict, SpeedVerdict::kSlower) << describe_change(slower);
  EXPECT_LT(slower.p_value, 0.01);
  // Seven rounds: no 99% interval and no significant test; the advice is at least eight rounds.
  baseline.resize(7);
  current.resize(7);
  const SpeedChange few = judge_paired_speed(baseline, current, 0.10);
  EXPECT_EQ(few.verdict, SpeedVerdict::kUndecided);
  EXPECT_GE(few.repeats_needed, kMinPairedRounds);
}

// The rule of Note [A slowdown the load explains]: a current side that ran under more load in
// every round (+10% of the CPUs) may owe a slowdown of up to twice that to it; a load that lands
// on both sides alike, or on the baseline, or a few points of CPU, excuses nothing.
TEST(LoadRule, OnlyACurrentSideUnderMoreLoadExplainsASlowdown) {
  std::vector<double> base, busier, alike, small;
  for (int i = 0; i < 10; ++i) {
    base.push_back(0.05 + 0.02 * (i % 3));
    busier.push_back(base.back() + 0.10 + 0.01 * (i % 2));
    alike.push_back(base.back() + 0.01 * ((i % 3) - 1));
    small.push_back(base.back() + 0.01);
  }
  const LoadComparison b = compare_load(base, busier);
  EXPECT_TRUE(b.current_busier);
  EXPECT_NEAR(b.centre, 0.105, 1e-9);
  EXPECT_LT(b.p_value, 0.01);
  EXPECT_FALSE(compare_load(base, alike).current_busier);
  EXPECT_FALSE(compare_load(busier, base).current_busier);
  EXPECT_FALSE(compare_load(base, small).current_busier);  // significant, but 1% of the CPUs
  // +10.5% of the CPUs may explain a build at least 20% slower (2x), not one at least 25%.
  EXPECT_TRUE(load_explains(b, 0.20));
  EXPECT_FALSE(load_explains(b, 0.25));
  EXPECT_FALSE(load_explains(compare_load(base, alike), 0.01));
}

// Note [Calibrating the gate on its runner] on 40 A/A rounds whose log ratios spread with a
// standard deviation of about 3%: the power figures follow from the spread by the formula, and
// subsets of 10 identical-build rounds are rarely called slower.
TEST(AbCalibration, FalseAlarmsAreMeasuredOnSubsetsAndPowerFollowsTheSpread) {
  std::vector<double> log_ratios;
  for (int i = 0; i < 40; ++i) log_ratios.push_back(0.03 * std::sin(1.7 * i + 0.3) * 1.41);
  const AbCalibration c = calibrate_ab(log_ratios, 10, 0.05, 7);
  EXPECT_EQ(c.rounds, 40);
  EXPECT_EQ(c.gate_rounds, 10);
  EXPECT_NEAR(c.log_ratio_sd, 0.03, 0.003);
  EXPECT_LE(c.false_alarm_rate, 0.01);
  EXPECT_LT(c.undecided_rate, 0.05);  // 10 rounds of 3% noise bound a loss at 5%...
  const double z = (normal_upper_quantile(0.005) + normal_upper_quantile(0.05)) *
                   std::sqrt(M_PI / 3) * c.log_ratio_sd;
  EXPECT_NEAR(c.detectable_slowdown, 1 - std::exp(-z / std::sqrt(10.0)), 1e-12);
  EXPECT_EQ(c.rounds_for_allowed,
            std::max<int64_t>(kMinPairedRounds, std::ceil(std::pow(z / -std::log(0.95), 2))));
  // ...and 10 rounds of 10% noise cannot.
  std::vector<double> noisy;
  for (double d : log_ratios) noisy.push_back(d * 10 / 3);
  const AbCalibration n = calibrate_ab(noisy, 10, 0.05, 7);
  EXPECT_GT(n.undecided_rate, 0.5);
  EXPECT_LE(n.false_alarm_rate, 0.01);
  EXPECT_GT(n.rounds_for_allowed, 40);
  // The same seed draws the same subsets.
  EXPECT_EQ(calibrate_ab(log_ratios, 10, 0.05, 7).false_alarm_rate, c.false_alarm_rate);
}

}  // namespace
}  // namespace ddpbench::stats
