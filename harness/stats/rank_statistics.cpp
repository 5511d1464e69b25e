// rank_statistics.cpp — see rank_statistics.h.
#include "stats/rank_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace ddpbench::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool has_ties(std::vector<double> all) {
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

// P(Binomial(n, 1/2) < k).
double binomial_half_below(int64_t n, int64_t k) {
  double total = 0, term = std::pow(0.5, static_cast<double>(n));  // C(n, 0) / 2^n
  for (int64_t i = 0; i < k; ++i) {
    total += term;
    term *= static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return total;
}

}  // namespace

// By bisection on erfc (accurate to ~1e-12; called a few times per decision).
double normal_upper_quantile(double q) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(mid / std::sqrt(2.0)) > q) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Interval median_interval(std::vector<double> v, double confidence) {
  Interval out;
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  const auto n = static_cast<int64_t>(v.size());
  int64_t k = 1;  // [x_(1), x_(n)] at least
  while (k + 1 <= (n + 1) / 2 && 1 - 2 * binomial_half_below(n, k + 1) >= confidence) ++k;
  out.lo = v[static_cast<size_t>(k - 1)];
  out.hi = v[static_cast<size_t>(n - k)];
  out.confidence = std::max(0.0, 1 - 2 * binomial_half_below(n, k));
  return out;
}

double exact_two_sided_p(const std::vector<double>& counts, double observed) {
  double total = 0, at_most = 0, at_least = 0;
  for (size_t t = 0; t < counts.size(); ++t) {
    total += counts[t];
    if (static_cast<double>(t) <= observed) at_most += counts[t];
    if (static_cast<double>(t) >= observed) at_least += counts[t];
  }
  return std::min(1.0, 2 * std::min(at_most, at_least) / total);
}

int64_t exact_interval_rank(const std::vector<double>& counts, double tail, int64_t limit,
                            double* below_k) {
  double total = 0;
  for (double c : counts) total += c;
  double cumulative = 0;
  int64_t k = 0;
  while (k < limit && cumulative + counts[static_cast<size_t>(k)] / total <= tail) {
    cumulative += counts[static_cast<size_t>(k)] / total;
    ++k;
  }
  *below_k = cumulative;
  return k;
}

std::vector<double> u_counts(size_t m, size_t n) {
  // counts[i][j][u] over i <= m, j <= n by the recurrence f(i, j, u) = f(i-1, j, u-j) +
  // f(i, j-1, u) (the largest value belongs to the first sample or the second), one j-row at a
  // time.
  std::vector<std::vector<double>> row(m + 1);     // row[i] = f(i, j, .) for the current j
  for (size_t i = 0; i <= m; ++i) row[i] = {1.0};  // j = 0: U = 0 in one way
  for (size_t j = 1; j <= n; ++j) {
    std::vector<std::vector<double>> next(m + 1);
    next[0] = {1.0};
    for (size_t i = 1; i <= m; ++i) {
      next[i].assign(i * j + 1, 0.0);
      for (size_t u = 0; u < next[i - 1].size(); ++u) next[i][u + j] += next[i - 1][u];
      for (size_t u = 0; u < row[i].size(); ++u) next[i][u] += row[i][u];
    }
    row = std::move(next);
  }
  return row[m];
}

MannWhitney mann_whitney(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitney r;
  const size_t m = x.size(), n = y.size();
  if (m == 0 || n == 0) return r;
  for (double a : x) {
    for (double b : y) r.u += a > b ? 1.0 : (a == b ? 0.5 : 0.0);
  }
  std::vector<double> all = x;
  all.insert(all.end(), y.begin(), y.end());
  const double mn = static_cast<double>(m * n);
  if (!has_ties(all) && m <= kExactLimit && n <= kExactLimit) {
    r.p_value = exact_two_sided_p(u_counts(m, n), r.u);
    r.exact = true;
    return r;
  }
  // Normal approximation: the variance shrinks by the ties (sum of t^3 - t over tied groups).
  std::map<double, double> groups;
  for (double a : all) groups[a] += 1;
  double tie_term = 0;
  for (const auto& [value, t] : groups) tie_term += t * t * t - t;
  const double big_n = static_cast<double>(m + n);
  const double var = mn / 12.0 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)));
  const double u_max = std::max(r.u, mn - r.u);
  const double z = var > 0 ? (u_max - mn / 2 - 0.5) / std::sqrt(var) : 0.0;
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

Shift hodges_lehmann(const std::vector<double>& x, const std::vector<double>& y,
                     double confidence) {
  Shift s;
  s.interval = {-kInf, kInf, 0};
  if (x.empty() || y.empty()) return s;
  std::vector<double> d;
  d.reserve(x.size() * y.size());
  for (double a : x) {
    for (double b : y) d.push_back(b - a);
  }
  std::sort(d.begin(), d.end());
  s.estimate = median(d);
  const size_t m = x.size(), n = y.size(), mn = d.size();
  const double tail = (1 - confidence) / 2;
  // k: the largest with P(U < k) <= tail; the interval is [d_(k), d_(mn+1-k)] with coverage
  // 1 - 2 P(U < k). Exact counts up to kExactLimit (ties only make it approximate), else normal.
  int64_t k = 0;
  double below_k = 0;  // P(U < k)
  if (m <= kExactLimit && n <= kExactLimit) {
    k = exact_interval_rank(u_counts(m, n), tail, static_cast<int64_t>(mn / 2), &below_k);
  } else {
    const double z = normal_upper_quantile(tail);
    const double sd = std::sqrt(static_cast<double>(m * n * (m + n + 1)) / 12.0);
    k = static_cast<int64_t>(std::floor(static_cast<double>(mn) / 2 - z * sd));
    below_k = tail;
  }
  if (k < 1) return s;  // not even [min, max] has the confidence asked for
  s.interval.lo = d[static_cast<size_t>(k - 1)];
  s.interval.hi = d[mn - static_cast<size_t>(k)];
  s.interval.confidence = 1 - 2 * below_k;
  return s;
}

}  // namespace ddpbench::stats
