// signed_rank.cpp — see signed_rank.h.
#include "stats/signed_rank.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace ddpbench::stats {
namespace {

struct Ranked {
  std::vector<double> ranks;  // of |d|, midranks for ties, in the order of the input
  double tie_term = 0;        // sum of t^3 - t over the groups of tied |d|
};

Ranked rank_magnitudes(const std::vector<double>& d) {
  Ranked r;
  std::vector<size_t> order(d.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return std::fabs(d[a]) < std::fabs(d[b]); });
  r.ranks.assign(d.size(), 0);
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && std::fabs(d[order[j + 1]]) == std::fabs(d[order[i]])) ++j;
    const double midrank = 0.5 * static_cast<double>(i + j) + 1;
    for (size_t k = i; k <= j; ++k) r.ranks[order[k]] = midrank;
    const auto t = static_cast<double>(j - i + 1);
    r.tie_term += t * t * t - t;
    i = j + 1;
  }
  return r;
}

std::vector<double> without_zeros(const std::vector<double>& d) {
  std::vector<double> out;
  for (double x : d) {
    if (x != 0) out.push_back(x);
  }
  return out;
}

}  // namespace

std::vector<double> signed_rank_counts(size_t n) {
  // Rank i joins the positive set or not: counts[t] += counts[t - i], largest t first.
  std::vector<double> counts(n * (n + 1) / 2 + 1, 0.0);
  counts[0] = 1;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t t = counts.size() - 1; t >= i; --t) counts[t] += counts[t - i];
  }
  return counts;
}

SignedRank wilcoxon_signed_rank(const std::vector<double>& differences) {
  SignedRank r;
  const std::vector<double> d = without_zeros(differences);
  r.n = d.size();
  if (d.empty()) return r;
  const Ranked ranked = rank_magnitudes(d);
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] > 0) r.t_plus += ranked.ranks[i];
  }
  const auto n = static_cast<double>(d.size());
  const double mean = n * (n + 1) / 4;
  if (ranked.tie_term == 0 && d.size() <= kExactLimit) {
    r.p_value = exact_two_sided_p(signed_rank_counts(d.size()), r.t_plus);
    r.exact = true;
    return r;
  }
  const double var = n * (n + 1) * (2 * n + 1) / 24 - ranked.tie_term / 48;
  const double z = var > 0 ? std::fabs(r.t_plus - mean) / std::sqrt(var) : 0.0;
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

Shift paired_hodges_lehmann(const std::vector<double>& differences, double confidence) {
  Shift s;
  const double inf = std::numeric_limits<double>::infinity();
  s.interval = {-inf, inf, 0};
  const std::vector<double>& d = differences;
  if (d.empty()) return s;
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (size_t i = 0; i < d.size(); ++i) {
    for (size_t j = i; j < d.size(); ++j) walsh.push_back(0.5 * (d[i] + d[j]));
  }
  std::sort(walsh.begin(), walsh.end());
  s.estimate = median(walsh);
  const size_t big_n = walsh.size();
  const double tail = (1 - confidence) / 2;
  int64_t k = 0;
  double below_k = 0;  // P(T+ < k)
  if (d.size() <= kExactLimit) {
    k = exact_interval_rank(signed_rank_counts(d.size()), tail, static_cast<int64_t>(big_n / 2),
                            &below_k);
  } else {
    const auto n = static_cast<double>(d.size());
    const double z = normal_upper_quantile(tail);
    const double sd = std::sqrt(n * (n + 1) * (2 * n + 1) / 24);
    k = static_cast<int64_t>(std::floor(n * (n + 1) / 4 - z * sd));
    below_k = tail;
  }
  if (k < 1) return s;
  s.interval.lo = walsh[static_cast<size_t>(k - 1)];
  s.interval.hi = walsh[big_n - static_cast<size_t>(k)];
  s.interval.confidence = 1 - 2 * below_k;
  return s;
}

}  // namespace ddpbench::stats
