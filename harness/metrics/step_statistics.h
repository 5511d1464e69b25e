// step_statistics.h — per-step phase timings and their summary. A step's time is the max over
// ranks (a data-parallel step is as slow as its slowest rank); percentiles interpolate linearly
// between order statistics (numpy's default), so p50 of [1, 2] is 1.5. Throughput comes from the
// median step (robust to the odd slow step); the mean and the coefficient of variation stand beside
// it, as google/benchmark reports mean, median, stddev and CV. Formulas: reports/METRICS.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::metrics {

// Seconds spent in each phase of one step.
struct PhaseTimes {
  double data = 0;  // loading and collating the batch
  double forward = 0;
  double backward =
      0;  // backward compute (DDP: buckets launch as they fill; allreduces overlap it)
  double comm_wait = 0;  // blocked on outstanding gradient allreduces after backward
  double optimizer = 0;
  double total = 0;
};

// Elementwise max, for combining ranks.
PhaseTimes max_of(const PhaseTimes& a, const PhaseTimes& b);

// q in [0, 100]; empty input gives 0.
double percentile(std::vector<double> values, double q);

struct StepSummary {
  int64_t steps = 0;
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;  // step time, seconds
  // Sample standard deviation of the step time (n - 1 in the denominator, google/benchmark's
  // StatisticsStdDev); 0 with fewer than 2 steps.
  double stddev = 0;
  double cv = 0;           // stddev / mean: the spread in units of the step (0 when mean is 0)
  PhaseTimes phase_means;  // mean seconds per phase
};

StepSummary summarize(const std::vector<PhaseTimes>& steps);

// Scaling efficiency of `world_size` devices against a one-device baseline:
// samples_per_s / (world_size x baseline_samples_per_s). -1 (not measured) when either
// throughput is not positive.
double scaling_efficiency(double samples_per_s, int64_t world_size, double baseline_samples_per_s);

// Note [Weak figures]: a throughput figure is still reported when it rests on little evidence, but
// flagged with why, so that nobody plots or gates on it unawares. The bounds:
// - fewer than kMinTimedSteps timed steps: a median of a handful of steps moves with each one;
// - a step-time CV above kMaxStepTimeCv: the steps disagree by more than 10% of the step, so the
//   machine was not quiet (other processes, frequency changes, first-touch allocation);
// - a scaling efficiency above kMaxPlausibleEfficiency: K devices doing more than K times the
//   work of one is, on one machine, a measurement artefact (usually a noisy baseline), not speed.
inline constexpr int64_t kMinTimedSteps = 10;
inline constexpr double kMaxStepTimeCv = 0.10;
inline constexpr double kMaxPlausibleEfficiency = 1.05;

// The reasons of Note [Weak figures] that apply, one sentence each; empty when the figure is
// sound or nothing was timed (timed_steps 0). scaling_efficiency < 0 means not measured.
std::vector<std::string> weak_reasons(int64_t timed_steps, double cv, double scaling_efficiency);

// nccl-tests' allreduce bus bandwidth: bytes * 2 (K - 1) / K per second of `seconds`.
double allreduce_bus_bandwidth(int64_t bytes, int64_t world_size, double seconds);

}  // namespace ddpbench::metrics
