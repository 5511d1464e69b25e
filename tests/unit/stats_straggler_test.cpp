// stats_straggler_test.cpp — Note [Stragglers]'s rule: a rank slower in most steps by more than
// the margin is named, with what it cost the step (the excess over the next slowest rank); ranks
// that take turns being slowest, a small margin, too few steps or one rank name nobody.
#include <gtest/gtest.h>

#include "stats/straggler.h"

namespace ddpbench::stats {
namespace {

// `ranks` ranks of 10 steps at `base` seconds, each step jittered by +-1% in a fixed pattern.
std::vector<std::vector<double>> even_ranks(int ranks, double base) {
  std::vector<std::vector<double>> c(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    for (int s = 0; s < 10; ++s) c[r].push_back(base * (1 + 0.01 * ((r + s) % 3 - 1)));
  }
  return c;
}

TEST(Straggler, ARankSlowerInEveryStepIsNamedWithWhatItCost) {
  auto c = even_ranks(3, 0.010);
  for (double& t : c[1]) t += 0.020;  // slow:rank=1,ms=20
  const StragglerScores s = straggler_scores(c);
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.slowest_steps, 10);
  EXPECT_NEAR(s.cost_s, 0.020, 0.0005);
  ASSERT_EQ(s.vs_fastest.size(), 3u);
  EXPECT_NEAR(s.vs_fastest[1], 3.0, 0.1);
  EXPECT_NEAR(s.vs_fastest[0], 1.0, 0.02);
  EXPECT_NE(s.summary.find("rank 1 is the straggler"), std::string::npos) << s.summary;
  EXPECT_NE(s.summary.find("in 10 of 10 timed steps"), std::string::npos) << s.summary;
}

TEST(Straggler, EvenRanksTakingTurnsNameNobody) {
  const StragglerScores s = straggler_scores(even_ranks(4, 0.010));
  EXPECT_EQ(s.rank, -1);
  EXPECT_NE(s.summary.find("no straggler"), std::string::npos) << s.summary;
  EXPECT_EQ(s.vs_own_best.size(), 4u);
}

TEST(Straggler, ASmallMarginTooFewStepsOrOneRankNameNobody) {
  auto c = even_ranks(2, 0.010);
  for (double& t : c[0]) t *= 1.05;  // slower every step, by less than the margin
  EXPECT_EQ(straggler_scores(c).rank, -1);
  EXPECT_NE(straggler_scores(c).summary.find("within 10% of the next slowest"), std::string::npos);
  auto few = even_ranks(2, 0.010);
  for (auto& r : few) r.resize(4);
  for (double& t : few[1]) t *= 2;
  EXPECT_EQ(straggler_scores(few).rank, -1);
  EXPECT_NE(straggler_scores(few).summary.find("fewer than the 5"), std::string::npos);
  EXPECT_EQ(straggler_scores(even_ranks(1, 0.01)).summary, "");
}

TEST(Straggler, ARankSlowOnlyInSomeStepsIsNotConsistent) {
  auto c = even_ranks(2, 0.010);
  // Far slower in 6 of the 10 steps, faster than rank 0 in the others.
  for (int s = 0; s < 10; ++s) c[1][s] = s < 6 ? 3 * c[1][s] : 0.009;
  const StragglerScores s = straggler_scores(c);
  EXPECT_EQ(s.rank, -1) << s.summary;
}

}  // namespace
}  // namespace ddpbench::stats
