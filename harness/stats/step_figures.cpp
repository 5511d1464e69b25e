// step_figures.cpp — see step_figures.h.
#include "stats/step_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ddpbench::stats {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

StepFigures step_figures(const std::vector<double>& times) {
  StepFigures f;
  f.steps = static_cast<int64_t>(times.size());
  if (times.empty()) return f;
  const double n = static_cast<double>(times.size());
  double sum = 0;
  for (double t : times) sum += t;
  f.mean = sum / n;
  f.p50 = percentile(times, 50);
  f.p90 = percentile(times, 90);
  f.p99 = percentile(times, 99);
  if (times.size() > 1) {
    double squares = 0;
    for (double t : times) squares += (t - f.mean) * (t - f.mean);
    f.stddev = std::sqrt(squares / (n - 1));
  }
  f.cv = f.mean > 0 ? f.stddev / f.mean : 0.0;
  return f;
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

}  // namespace ddpbench::stats
