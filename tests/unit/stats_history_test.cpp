// stats_history_test.cpp — `history`'s change points and status on synthetic series of 30
// commits (5 repeats each, log-normal noise of 3% per repeat from a fixed seed, as the project's
// CI machine gives with --repeats 5 on a quiet core): one 10% step at commit 20 is found there
// (+-1) and makes the newest commits a regression, and a step two commits from either end where
// it starts; no step finds none; one outlier commit is suspicious, not a regression; a short
// series is insufficient data; a step that the runner's load explains is not counted slower.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "stats/change_points.h"

namespace ddpbench::stats {
namespace {

// Box-Muller over mt19937's raw output: the same numbers on every standard library (the
// <random> distributions are implementation-defined).
struct Noise {
  std::mt19937 gen;
  double uniform() { return (static_cast<double>(gen()) + 0.5) / 4294967296.0; }
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }
};

// 30 commits' repeat medians: `level(c)` seconds per step times log-normal noise.
template <typename Level>
std::vector<std::vector<double>> series(Level level, uint32_t seed, int commits = 30) {
  Noise noise{std::mt19937(seed)};
  std::vector<std::vector<double>> out(static_cast<size_t>(commits));
  for (int c = 0; c < commits; ++c) {
    for (int r = 0; r < 5; ++r) out[c].push_back(level(c) * std::exp(0.03 * noise.normal()));
  }
  return out;
}

TEST(History, FindsATenPercentStepWhereItStarts) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const HistoryJudgement h = judge_history(
        series([](int c) { return c < 20 ? 0.010 : 0.010 / 0.9; }, seed), 0.05, kDefaultLookback);
    ASSERT_EQ(h.change_points.size(), 1u) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(h.change_points[0].index), 20, 1) << "seed " << seed;
    EXPECT_NEAR(h.change_points[0].change, -0.10, 0.03) << "seed " << seed;
    EXPECT_EQ(h.status, HistoryStatus::kRegression) << "seed " << seed;
  }
}

TEST(History, NoStepNoChangePointAndOk) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const HistoryJudgement h =
        judge_history(series([](int) { return 0.010; }, seed), 0.05, kDefaultLookback);
    EXPECT_TRUE(h.change_points.empty()) << "seed " << seed;
    EXPECT_EQ(h.status, HistoryStatus::kOk) << "seed " << seed;
  }
}

TEST(History, OneOutlierCommitIsSuspiciousNotARegression) {
  for (const int at : {12, 29}) {  // in the middle, and the newest commit alone
    const HistoryJudgement h = judge_history(
        series([at](int c) { return c == at ? 0.013 : 0.010; }, 7), 0.05, kDefaultLookback);
    EXPECT_TRUE(h.change_points.empty()) << "outlier at " << at;
    EXPECT_EQ(h.status, HistoryStatus::kSuspicious) << "outlier at " << at;
    EXPECT_TRUE(h.commits[static_cast<size_t>(at)].slower);
  }
}

// Issue 73 C8: a step two commits from the end starts its level where it starts. With levels of
// at least 3 commits everywhere, the only cut left was a commit early (c1..c6 with c5 and c6 30%
// slower: "change point at c4"); a step two commits from the start likewise a commit late.
TEST(History, AStepTwoCommitsFromEitherEndIsPlacedWhereItStarts) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const HistoryJudgement six = judge_history(
        series([](int c) { return c < 4 ? 0.010 : 0.013; }, seed, 6), 0.05, kDefaultLookback);
    ASSERT_EQ(six.change_points.size(), 1u) << "seed " << seed;
    EXPECT_EQ(six.change_points[0].index, 4u) << "seed " << seed;
    EXPECT_EQ(six.status, HistoryStatus::kRegression) << "seed " << seed;
    const HistoryJudgement late = judge_history(
        series([](int c) { return c < 28 ? 0.010 : 0.013; }, seed), 0.05, kDefaultLookback);
    ASSERT_EQ(late.change_points.size(), 1u) << "seed " << seed;
    EXPECT_EQ(late.change_points[0].index, 28u) << "seed " << seed;
    const HistoryJudgement early = judge_history(
        series([](int c) { return c < 2 ? 0.013 : 0.010; }, seed), 0.05, kDefaultLookback);
    ASSERT_EQ(early.change_points.size(), 1u) << "seed " << seed;
    EXPECT_EQ(early.change_points[0].index, 2u) << "seed " << seed;
  }
}

TEST(History, TooFewCommitsOrRepeatsIsInsufficientData) {
  EXPECT_EQ(judge_history(series([](int) { return 0.01; }, 3, 2), 0.05, kDefaultLookback).status,
            HistoryStatus::kInsufficientData);
  // One repeat per commit and a lookback of 3 commits: 3 values, fewer than 5.
  const std::vector<std::vector<double>> single = {{0.01}, {0.01}, {0.01}, {0.01}};
  EXPECT_EQ(judge_history(single, 0.05, 3).status, HistoryStatus::kInsufficientData);
}

// Issue 74: the 10% step at commit 20 is the runner's doing: from commit 20 on, another job took
// 30% of the CPUs during every repeat. With the loads recorded, no commit is counted slower and
// the series is not a regression; the step is still a change point (the level did change).
TEST(History, ASlowdownUnderMoreLoadThanTheLookbackIsNotCounted) {
  const auto steps = series([](int c) { return c < 20 ? 0.010 : 0.010 / 0.9; }, 1);
  std::vector<std::vector<double>> shares(steps.size());
  for (size_t c = 0; c < steps.size(); ++c) {
    for (int r = 0; r < 5; ++r) shares[c].push_back((c < 20 ? 0.0 : 0.3) + 0.01 * r);
  }
  const HistoryJudgement h = judge_history(steps, 0.05, kDefaultLookback, &shares);
  EXPECT_NE(h.status, HistoryStatus::kRegression);
  EXPECT_EQ(h.change_points.size(), 1u);
  EXPECT_TRUE(h.commits[20].load_explains);
  EXPECT_FALSE(h.commits[20].slower);
  EXPECT_NEAR(h.commits[20].load, 0.32, 1e-9);
  EXPECT_NEAR(h.commits[20].lookback_load, 0.02, 1e-9);
  // The same step with the load unchanged is a regression, as before.
  std::vector<std::vector<double>> flat(steps.size(), std::vector<double>(5, 0.05));
  EXPECT_EQ(judge_history(steps, 0.05, kDefaultLookback, &flat).status, HistoryStatus::kRegression);
}

}  // namespace
}  // namespace ddpbench::stats
