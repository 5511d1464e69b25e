// step_figures.h — what a point's timed steps determine besides their spread: the percentiles,
// mean and CV of the step time, whether the figures are weak (Note [Weak figures]), the scaling
// efficiency and nccl-tests' allreduce bus bandwidth. `run` computes a report's figures with these
// (metrics/step_statistics.h forwards to them) and `report` and `gate` recompute them from the
// report's stored samples (compare/throughput_spread.h), so an edited figure is refused. No torch.
//
// Note [Weak figures]: a throughput figure is still reported when it rests on little evidence, but
// flagged with why, so that nobody plots or gates on it unawares. The bounds:
// - fewer than kMinTimedSteps timed steps: a median of a handful of steps moves with each one;
// - a step-time CV above kMaxStepTimeCv: the steps disagree by more than 10% of the step, so the
//   machine was not quiet (other processes, frequency changes, first-touch allocation);
// - a scaling efficiency above kMaxPlausibleEfficiency: K devices doing more than K times the
//   work of one is, on one machine, a measurement artefact (usually a noisy baseline), not speed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::stats {

// q in [0, 100], interpolating linearly between order statistics (numpy's default: p50 of [1, 2]
// is 1.5); empty input gives 0.
double percentile(std::vector<double> values, double q);

// The step time over every timed step, in the order given.
struct StepFigures {
  int64_t steps = 0;
  double p50 = 0, p90 = 0, p99 = 0;
  double mean = 0;  // the sum in order, over the count
  // Sample standard deviation (n - 1 in the denominator, google/benchmark's StatisticsStdDev); 0
  // with fewer than 2 steps.
  double stddev = 0;
  double cv = 0;  // stddev / mean: the spread in units of the step (0 when mean is 0)
};
StepFigures step_figures(const std::vector<double>& step_times);

inline constexpr int64_t kMinTimedSteps = 10;
inline constexpr double kMaxStepTimeCv = 0.10;
inline constexpr double kMaxPlausibleEfficiency = 1.05;

// The reasons of Note [Weak figures] that apply, one sentence each; empty when the figure is
// sound or nothing was timed (timed_steps 0). scaling_efficiency < 0 means not measured.
std::vector<std::string> weak_reasons(int64_t timed_steps, double cv, double scaling_efficiency);

// Scaling efficiency of `world_size` devices against a one-device baseline:
// samples_per_s / (world_size x baseline_samples_per_s). -1 (not measured) when either
// throughput is not positive.
double scaling_efficiency(double samples_per_s, int64_t world_size, double baseline_samples_per_s);

// nccl-tests' allreduce bus bandwidth: bytes * 2 (K - 1) / K per second of `seconds` (0 for one
// rank or no time).
double allreduce_bus_bandwidth(int64_t bytes, int64_t world_size, double seconds);

}  // namespace ddpbench::stats
