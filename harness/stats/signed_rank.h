// signed_rank.h — the paired statistics of an interleaved A/B comparison: the Wilcoxon
// signed-rank test of paired differences and the one-sample Hodges-Lehmann estimate (the median
// of the Walsh averages) with the interval the test inverts. The pairs are the rounds of one job,
// baseline and current measured back to back in a random order, so a load that drifts across the
// job moves both members of a pair alike and cancels in their difference; a two-sample statistic
// over the same numbers (rank_statistics.h) would count the drift as noise.
//
// As scipy.stats.wilcoxon does (zero_method='wilcox', correction=False): zero differences are
// dropped; without ties and with at most kExactLimit differences, the exact null distribution of
// T+ (each of the 2^n sign patterns equally likely); otherwise the normal approximation with the
// tie-corrected variance. tests/unit/stats_signed_rank_test.cpp checks both against scipy 1.17.1.
#pragma once

#include <cstddef>
#include <vector>

#include "stats/rank_statistics.h"

namespace ddpbench::stats {

struct SignedRank {
  double t_plus = 0;   // sum of the ranks of |d| over the positive d (midranks for ties)
  double p_value = 1;  // two-sided
  bool exact = false;  // the exact distribution, else the normal approximation
  std::size_t n = 0;   // differences after the zeros are dropped
};

SignedRank wilcoxon_signed_rank(const std::vector<double>& differences);

// The Hodges-Lehmann estimate of the differences' centre (the median of the n(n+1)/2 Walsh
// averages (d_i + d_j)/2, i <= j) and [W_(k), W_(N+1-k)], the Walsh averages' order statistics
// for the largest k with P(T+ < k) <= (1 - confidence)/2: the centres the signed-rank test at
// 1 - confidence would not reject. Exact up to kExactLimit differences, normal beyond; no interval
// (-inf, +inf, confidence 0) when too few differences can reach `confidence` (8 for 99%: 2/2^8).
Shift paired_hodges_lehmann(const std::vector<double>& differences, double confidence);

// How many of the 2^n sign patterns give T+ = t, for t = 0..n(n+1)/2.
std::vector<double> signed_rank_counts(std::size_t n);

}  // namespace ddpbench::stats
