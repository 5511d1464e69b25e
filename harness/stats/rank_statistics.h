// rank_statistics.h — the distribution-free statistics the performance gate decides with: the
// median and an order-statistic interval of it, the Mann-Whitney U test, and the Hodges-Lehmann
// shift between two samples with its interval (the one the U test inverts). Distribution-free on
// purpose: step times on a shared machine are skewed and multi-modal (a process that lands on a
// busy core stays slow), so a normal model's mean and t-interval would be pulled by the slow tail.
// Exact small-sample distributions where there are no ties (both samples up to kExactLimit), the
// normal approximation with tie and continuity corrections otherwise: scipy.stats.mannwhitneyu's
// two methods, against which tests/unit/stats_rank_statistics_test.cpp checks fixed vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddpbench::stats {

// Samples of at most this size each, without ties, get exact distributions.
inline constexpr std::size_t kExactLimit = 50;

double median(std::vector<double> values);  // 0 for none

// The standard normal's upper quantile: z with P(Z > z) = q.
double normal_upper_quantile(double q);

// [lo, hi] with the confidence it really has (exact, from the binomial distribution of order
// statistics): the widest confidence at most the one asked for whose interval exists, or, when
// even [min, max] has less, that interval and its confidence (1 - 2 * 0.5^n; 0 for one value).
struct Interval {
  double lo = 0, hi = 0;
  double confidence = 0;
};

// The interval of the median of `values`: [x_(k), x_(n+1-k)] for the largest k whose coverage
// 1 - 2 P(Binomial(n, 1/2) < k) is at least `confidence`.
Interval median_interval(std::vector<double> values, double confidence);

struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (x, y) with x > y, ties counting 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // the exact distribution (no ties, small samples), else asymptotic
};

MannWhitney mann_whitney(const std::vector<double>& x, const std::vector<double>& y);

// The Hodges-Lehmann estimate of the shift from x to y (the median of all differences y_j - x_i)
// and the interval of the differences' order statistics that the U test inverts: the shifts the
// test at 1 - confidence would not reject. `interval.confidence` is what it really has; when no
// interval reaches `confidence` (too few samples: 5 and 5 are needed for 99%), lo and hi are
// -inf and +inf and confidence is 0.
struct Shift {
  double estimate = 0;
  Interval interval;
};

Shift hodges_lehmann(const std::vector<double>& x, const std::vector<double>& y, double confidence);

// From a statistic's exact null distribution (`counts[t]`: the ways it takes value t): the
// two-sided p-value of `observed`, twice the smaller tail, at most 1.
double exact_two_sided_p(const std::vector<double>& counts, double observed);

// The largest k (at most `limit`) with P(T < k) <= tail under `counts`, and that probability in
// `below_k`: the order statistic at which an interval that inverts the test starts.
int64_t exact_interval_rank(const std::vector<double>& counts, double tail, int64_t limit,
                            double* below_k);

// The number of ways (of C(m+n, m)) the U statistic of samples of sizes m and n takes each value
// 0..m*n when there are no ties: the exact null distribution both the test and the interval read.
std::vector<double> u_counts(std::size_t m, std::size_t n);

}  // namespace ddpbench::stats
