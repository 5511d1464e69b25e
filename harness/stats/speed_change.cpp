// speed_change.cpp — see speed_change.h.
#include "stats/speed_change.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/rank_statistics.h"
#include "stats/signed_rank.h"

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

// The normal quantile at kGateConfidence, widened by sqrt(pi/3): a rank statistic's efficiency
// against the t-test under normal noise is 3/pi.
double z_rank() { return normal_upper_quantile((1 - kGateConfidence) / 2) * std::sqrt(M_PI / 3); }

// Note [Deciding a slowdown]'s advice: repeats (or rounds) whose interval half-width fits in
// `gap` (log step-time units), at least `fewest`.
int64_t repeats_for(double half_width_at_one, double gap, int64_t fewest) {
  if (!(gap > 1e-9)) return -1;
  const double r = std::pow(half_width_at_one / gap, 2);
  if (r > static_cast<double>(kMaxRepeatsAdvice)) return kMaxRepeatsAdvice + 1;
  return std::max(fewest, static_cast<int64_t>(std::ceil(r)));
}

std::string percent(double f) {
  if (std::isinf(f)) return f > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", 100 * f);
}

// Note [Deciding a slowdown]'s rules on a shift of log seconds per step (positive = slower) and
// its test. `half_width_at_one` is the interval's half-width with one repeat (or round), which
// shrinks as 1/sqrt(R): the undecided advice.
SpeedChange decide(const Shift& shift, double p_value, bool exact, double allowed,
                   double half_width_at_one, int64_t fewest) {
  SpeedChange c;
  c.change = std::exp(-shift.estimate) - 1;
  c.low = std::exp(-shift.interval.hi) - 1;
  c.high = std::exp(-shift.interval.lo) - 1;
  c.confidence = shift.interval.confidence;
  c.p_value = p_value;
  c.exact = exact;
  const double boundary = -std::log(1 - allowed);  // the shift at which `allowed` is lost
  const bool has_interval = c.confidence > 0;
  if (p_value < 1 - kGateConfidence && shift.estimate > boundary) {
    c.verdict = SpeedVerdict::kSlower;
  } else if (has_interval && shift.interval.hi <= boundary) {
    c.verdict = SpeedVerdict::kOk;
  } else {
    c.verdict = SpeedVerdict::kUndecided;
    // Beyond the boundary, the slowdown must be shown significant (the interval clear of 0);
    // short of it, the interval must clear the boundary.
    const double gap = shift.estimate > boundary ? shift.estimate : boundary - shift.estimate;
    c.repeats_needed = half_width_at_one > 0 ? repeats_for(half_width_at_one, gap, fewest) : fewest;
  }
  return c;
}

}  // namespace

SpeedChange judge_speed(const std::vector<double>& baseline, const std::vector<double>& current,
                        double allowed) {
  const std::vector<double> b = logs_of(baseline), k = logs_of(current);
  const Shift shift = hodges_lehmann(b, k, kGateConfidence);
  const MannWhitney test = mann_whitney(b, k);
  const size_t dof = b.size() + k.size() >= 3 ? b.size() + k.size() - 2 : 0;
  const double sd =
      dof > 0 ? std::sqrt((squared_deviations(b) + squared_deviations(k)) / dof) : 0.0;
  // Two samples of R each: the shift's standard error is s * sqrt(2/R).
  return decide(shift, test.p_value, test.exact, allowed, z_rank() * sd * std::sqrt(2.0),
                kMinGateRepeats);
}

SpeedChange judge_paired_speed(const std::vector<double>& baseline,
                               const std::vector<double>& current, double allowed) {
  std::vector<double> d;
  for (size_t i = 0; i < baseline.size() && i < current.size(); ++i) {
    d.push_back(std::log(current[i]) - std::log(baseline[i]));
  }
  const Shift shift = paired_hodges_lehmann(d, kGateConfidence);
  const SignedRank test = wilcoxon_signed_rank(d);
  const double sd = d.size() >= 2 ? std::sqrt(squared_deviations(d) / (d.size() - 1)) : 0.0;
  return decide(shift, test.p_value, test.exact, allowed, z_rank() * sd, kMinPairedRounds);
}

std::string describe_change(const SpeedChange& c) {
  if (c.confidence <= 0) return fmt::format("{} (no interval)", percent(c.change));
  return fmt::format("{} [{}, {}]", percent(c.change), percent(c.low), percent(c.high));
}

}  // namespace ddpbench::stats
