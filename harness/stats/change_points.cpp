// change_points.cpp — see change_points.h.
#include "stats/change_points.h"

#include <algorithm>
#include <cmath>

#include "stats/load_rule.h"
#include "stats/rank_statistics.h"

namespace ddpbench::stats {
namespace {

constexpr size_t kMinSegment = 3;
constexpr size_t kMinEndSegment = 2;   // a level at either end of the series
constexpr double kPenaltyScale = 2.0;  // Note [Finding change points]

struct Segment {
  size_t begin, end;  // [begin, end)
};

double median_of(const std::vector<double>& x, size_t begin, size_t end) {
  return median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(begin),
                                    x.begin() + static_cast<std::ptrdiff_t>(end)));
}

// The summed absolute deviation from the segment's median.
double cost(const std::vector<double>& x, size_t begin, size_t end) {
  const double m = median_of(x, begin, end);
  double sad = 0;
  for (size_t i = begin; i < end; ++i) sad += std::fabs(x[i] - m);
  return sad;
}

// Note [Finding change points]'s sigma: the median absolute successive difference, scaled.
double robust_sigma(const std::vector<double>& x) {
  std::vector<double> d;
  for (size_t i = 1; i < x.size(); ++i) d.push_back(std::fabs(x[i] - x[i - 1]));
  return 1.4826 * median(d) / std::sqrt(2.0);
}

// Note [Finding change points]'s shortest level: 3 commits, 2 at either end of the series.
size_t shortest(size_t begin, size_t end, size_t n) {
  return begin == 0 || end == n ? kMinEndSegment : kMinSegment;
}

void split(const std::vector<double>& x, Segment s, double penalty, std::vector<size_t>& cuts) {
  if (s.end - s.begin < 2 * kMinEndSegment) return;
  const size_t n = x.size();
  const double whole = cost(x, s.begin, s.end);
  double best_gain = 0;
  size_t best = 0;
  for (size_t t = s.begin + 1; t < s.end; ++t) {
    if (t - s.begin < shortest(s.begin, t, n) || s.end - t < shortest(t, s.end, n)) continue;
    const double gain = whole - cost(x, s.begin, t) - cost(x, t, s.end);
    if (gain > best_gain) {
      best_gain = gain;
      best = t;
    }
  }
  if (best == 0 || best_gain <= penalty) return;
  cuts.push_back(best);
  split(x, {s.begin, best}, penalty, cuts);
  split(x, {best, s.end}, penalty, cuts);
}

}  // namespace

std::vector<ChangePoint> find_change_points(const std::vector<double>& x, double floor_sigma) {
  std::vector<ChangePoint> out;
  if (x.size() < 2 * kMinEndSegment) return out;
  const double sigma = std::max(robust_sigma(x), floor_sigma);
  const double penalty = kPenaltyScale * sigma * std::log(static_cast<double>(x.size()));
  std::vector<size_t> cuts;
  split(x, {0, x.size()}, penalty, cuts);
  std::sort(cuts.begin(), cuts.end());
  for (size_t i = 0; i < cuts.size(); ++i) {
    const size_t begin = i == 0 ? 0 : cuts[i - 1];
    const size_t end = i + 1 < cuts.size() ? cuts[i + 1] : x.size();
    // Log step time up = throughput down.
    const double shift = median_of(x, cuts[i], end) - median_of(x, begin, cuts[i]);
    out.push_back({cuts[i], std::exp(-shift) - 1});
  }
  return out;
}

std::vector<double> lookback_pool(const std::vector<std::vector<double>>& repeat_medians,
                                  const std::vector<CommitJudgement>& judged, size_t before,
                                  size_t lookback, size_t* commits_used) {
  std::vector<double> pool;
  size_t used = 0;
  for (size_t p = before; p > 0 && used < lookback; --p) {
    if (judged[p - 1].slower) continue;
    pool.insert(pool.end(), repeat_medians[p - 1].begin(), repeat_medians[p - 1].end());
    ++used;
  }
  if (commits_used != nullptr) *commits_used = used;
  return pool;
}

HistoryJudgement judge_history(const std::vector<std::vector<double>>& repeat_medians,
                               double allowed, size_t lookback,
                               const std::vector<std::vector<double>>* others_shares) {
  HistoryJudgement h;
  const size_t n = repeat_medians.size();
  std::vector<double> levels;
  double floor_sigma = 0;
  for (const auto& r : repeat_medians) {
    levels.push_back(std::log(median(r)));
    // A commit median's own noise: the spread of its repeats (log), over sqrt(repeats).
    if (r.size() >= 2) {
      std::vector<double> logs;
      for (double v : r) logs.push_back(std::log(v));
      const double m = median(logs);
      std::vector<double> dev;
      for (double v : logs) dev.push_back(std::fabs(v - m));
      floor_sigma =
          std::max(floor_sigma, 1.4826 * median(dev) / std::sqrt(static_cast<double>(r.size())));
    }
  }
  h.change_points = find_change_points(levels, floor_sigma);
  for (size_t c = 0; c < n; ++c) {
    CommitJudgement j;
    const std::vector<double> pool =
        lookback_pool(repeat_medians, h.commits, c, lookback, &j.lookback_commits);
    j.lookback_repeats = pool.size();
    j.against_lookback = judge_speed(pool, repeat_medians[c], allowed);
    j.slower = static_cast<int64_t>(pool.size()) >= kMinGateRepeats &&
               j.against_lookback.verdict == SpeedVerdict::kSlower;
    if (j.slower && others_shares != nullptr) {
      // The lookback's commits are the ones `pool` came from (h.commits is filled up to c).
      const LoadComparison load = compare_unpaired_load(
          lookback_pool(*others_shares, h.commits, c, lookback), (*others_shares)[c]);
      j.lookback_load = load.baseline_median;
      j.load = load.current_median;
      j.load_explains = load_explains(load, -j.against_lookback.high);
      j.slower = !j.load_explains;
    }
    h.commits.push_back(j);
  }
  size_t trailing = 0;
  while (trailing < n && h.commits[n - 1 - trailing].slower) ++trailing;
  const bool any_slower =
      std::any_of(h.commits.begin(), h.commits.end(), [](const auto& j) { return j.slower; });
  // The newest commit's lookback.
  const size_t last_pool = n > 0 ? h.commits.back().lookback_repeats : 0;
  if (trailing >= 2) {
    h.status = HistoryStatus::kRegression;
  } else if (any_slower) {
    h.status = HistoryStatus::kSuspicious;
  } else if (n < 3 || static_cast<int64_t>(last_pool) < kMinGateRepeats) {
    h.status = HistoryStatus::kInsufficientData;
  } else {
    h.status = HistoryStatus::kOk;
  }
  return h;
}

const char* status_name(HistoryStatus s) {
  switch (s) {
    case HistoryStatus::kOk:
      return "ok";
    case HistoryStatus::kRegression:
      return "regression";
    case HistoryStatus::kSuspicious:
      return "suspicious";
    case HistoryStatus::kInsufficientData:
      return "insufficient data";
  }
  return "?";
}

}  // namespace ddpbench::stats
