// speed_change.cpp — see speed_change.h.
#include "stats/speed_change.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/rank_statistics.h"

namespace ddpbench::stats {
namespace {

std::vector<double> logs_of(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(x));
  return out;
}

// Sum of squared deviations from the sample's own mean.
double squared_deviations(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss;
}

// Note [Deciding a slowdown]'s advice: repeats per side whose interval half-width fits in `gap`
// (log step-time units).
int64_t repeats_for(double sd, double gap) {
  if (!(gap > 1e-9)) return -1;
  const double z = normal_upper_quantile((1 - kGateConfidence) / 2);
  const double half_width_at_one = z * std::sqrt(M_PI / 3) * sd * std::sqrt(2.0);
  const double r = std::pow(half_width_at_one / gap, 2);
  if (r > static_cast<double>(kMaxRepeatsAdvice)) return kMaxRepeatsAdvice + 1;
  return std::max(kMinGateRepeats, static_cast<int64_t>(std::ceil(r)));
}

std::string percent(double f) {
  if (std::isinf(f)) return f > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", 100 * f);
}

}  // namespace

SpeedChange judge_speed(const std::vector<double>& baseline, const std::vector<double>& current,
                        double allowed) {
  SpeedChange c;
  const std::vector<double> b = logs_of(baseline), k = logs_of(current);
  // The shift is in log seconds per step: positive = slower steps = fewer samples/s.
  const Shift shift = hodges_lehmann(b, k, kGateConfidence);
  const MannWhitney test = mann_whitney(b, k);
  c.change = std::exp(-shift.estimate) - 1;
  c.low = std::exp(-shift.interval.hi) - 1;
  c.high = std::exp(-shift.interval.lo) - 1;
  c.confidence = shift.interval.confidence;
  c.p_value = test.p_value;
  c.exact = test.exact;
  const double boundary = -std::log(1 - allowed);  // the shift at which `allowed` is lost
  const bool has_interval = c.confidence > 0;
  if (test.p_value < 1 - kGateConfidence && shift.estimate > boundary) {
    c.verdict = SpeedVerdict::kSlower;
  } else if (has_interval && shift.interval.hi <= boundary) {
    c.verdict = SpeedVerdict::kOk;
  } else {
    c.verdict = SpeedVerdict::kUndecided;
    const size_t dof = b.size() + k.size() >= 3 ? b.size() + k.size() - 2 : 0;
    const double sd =
        dof > 0 ? std::sqrt((squared_deviations(b) + squared_deviations(k)) / dof) : 0.0;
    // Beyond the boundary, the slowdown must be shown significant (the interval clear of 0);
    // short of it, the interval must clear the boundary.
    const double gap =
        shift.estimate > boundary ? shift.estimate : boundary - shift.estimate;
    c.repeats_needed = sd > 0 ? repeats_for(sd, gap) : kMinGateRepeats;
  }
  return c;
}

std::string describe_change(const SpeedChange& c) {
  if (c.confidence <= 0) return fmt::format("{} (no interval)", percent(c.change));
  return fmt::format("{} [{}, {}]", percent(c.change), percent(c.low), percent(c.high));
}

}  // namespace ddpbench::stats
