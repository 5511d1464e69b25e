// step_statistics.cpp — see step_statistics.h.
#include "metrics/step_statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ddpbench::metrics {

PhaseTimes max_of(const PhaseTimes& a, const PhaseTimes& b) {
  return {std::max(a.data, b.data),           std::max(a.forward, b.forward),
          std::max(a.backward, b.backward),   std::max(a.comm_wait, b.comm_wait),
          std::max(a.optimizer, b.optimizer), std::max(a.total, b.total)};
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

StepSummary summarize(const std::vector<PhaseTimes>& steps) {
  StepSummary s;
  s.steps = static_cast<int64_t>(steps.size());
  if (steps.empty()) return s;
  std::vector<double> totals;
  for (const auto& t : steps) {
    totals.push_back(t.total);
    s.phase_means.data += t.data;
    s.phase_means.forward += t.forward;
    s.phase_means.backward += t.backward;
    s.phase_means.comm_wait += t.comm_wait;
    s.phase_means.optimizer += t.optimizer;
    s.phase_means.total += t.total;
  }
  const double n = static_cast<double>(steps.size());
  for (double* p : {&s.phase_means.data, &s.phase_means.forward, &s.phase_means.backward,
                    &s.phase_means.comm_wait, &s.phase_means.optimizer, &s.phase_means.total}) {
    *p /= n;
  }
  s.p50 = percentile(totals, 50);
  s.p90 = percentile(totals, 90);
  s.p99 = percentile(totals, 99);
  s.mean = s.phase_means.total;
  if (steps.size() > 1) {
    double squares = 0;
    for (double t : totals) squares += (t - s.mean) * (t - s.mean);
    s.stddev = std::sqrt(squares / (n - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  return s;
}

std::vector<std::string> weak_reasons(int64_t timed_steps, double cv, double scaling_efficiency) {
  std::vector<std::string> out;
  if (timed_steps <= 0) return out;
  if (timed_steps < kMinTimedSteps) {
    out.push_back(
        fmt::format("{} timed step{} (< {}): too few for a stable median; time {} or more "
                    "with --steps",
                    timed_steps, timed_steps == 1 ? "" : "s", kMinTimedSteps, kMinTimedSteps));
  }
  if (cv > kMaxStepTimeCv) {
    out.push_back(
        fmt::format("step-time CV {:.2f} (> {:.2f}): the steps vary too much; run on a "
                    "quiet machine, with more --warmup and --steps",
                    cv, kMaxStepTimeCv));
  }
  if (scaling_efficiency > kMaxPlausibleEfficiency) {
    out.push_back(
        fmt::format("scaling efficiency {:.1f}% (> {:.0f}%): super-linear scaling is a "
                    "measurement artefact (a noisy baseline), not speed-up",
                    100 * scaling_efficiency, 100 * kMaxPlausibleEfficiency));
  }
  return out;
}

double scaling_efficiency(double samples_per_s, int64_t world_size, double baseline_samples_per_s) {
  if (samples_per_s <= 0 || baseline_samples_per_s <= 0 || world_size < 1) return -1;
  return samples_per_s / (static_cast<double>(world_size) * baseline_samples_per_s);
}

double allreduce_bus_bandwidth(int64_t bytes, int64_t world_size, double seconds) {
  if (seconds <= 0 || world_size <= 1) return 0.0;
  return static_cast<double>(bytes) * 2.0 * static_cast<double>(world_size - 1) /
         static_cast<double>(world_size) / seconds;
}

}  // namespace ddpbench::metrics
