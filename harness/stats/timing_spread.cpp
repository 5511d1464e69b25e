// timing_spread.cpp — see timing_spread.h.
#include "stats/timing_spread.h"

#include <algorithm>
#include <cmath>

namespace ddpbench::stats {

TimingSpread timing_spread(const std::vector<std::vector<double>>& step_times) {
  TimingSpread s;
  double sum = 0;
  int64_t n = 0;
  for (const auto& steps : step_times) {
    if (steps.empty()) continue;
    s.repeat_medians.push_back(median(steps));
    for (double t : steps) {
      sum += t;
      ++n;
    }
  }
  s.repeats = static_cast<int64_t>(s.repeat_medians.size());
  if (s.repeats == 0) return s;
  s.median = median(s.repeat_medians);
  s.median_interval = median_interval(s.repeat_medians, kReportConfidence);
  const double mean = sum / static_cast<double>(n);
  if (n > 1 && mean > 0) {
    double var = 0;
    for (const auto& steps : step_times) {
      for (double t : steps) var += (t - mean) * (t - mean);
    }
    s.cv = std::sqrt(var / static_cast<double>(n - 1)) / mean;
  }
  const auto [lo, hi] = std::minmax_element(s.repeat_medians.begin(), s.repeat_medians.end());
  s.repeat_spread = s.median > 0 ? (*hi - *lo) / s.median : 0.0;
  return s;
}

}  // namespace ddpbench::stats
