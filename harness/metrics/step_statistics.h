// step_statistics.h — per-step phase timings and their summary. A step's time is the max over
// ranks (a data-parallel step is as slow as its slowest rank); percentiles interpolate linearly
// between order statistics (numpy's default), so p50 of [1, 2] is 1.5. Formulas:
// reports/METRICS.md.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::metrics {

// Seconds spent in each phase of one step.
struct PhaseTimes {
  double data = 0;  // loading and collating the batch
  double forward = 0;
  double backward = 0;   // backward compute (DDP: buckets launch as they fill; allreduces overlap it)
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
  PhaseTimes phase_means;                      // mean seconds per phase
};

StepSummary summarize(const std::vector<PhaseTimes>& steps);

// Scaling efficiency of `world_size` devices against a one-device baseline:
// samples_per_s / (world_size x baseline_samples_per_s). -1 (not measured) when either
// throughput is not positive.
double scaling_efficiency(double samples_per_s, int64_t world_size, double baseline_samples_per_s);

// nccl-tests' allreduce bus bandwidth: bytes * 2 (K - 1) / K per second of `seconds`.
double allreduce_bus_bandwidth(int64_t bytes, int64_t world_size, double seconds);

}  // namespace ddpbench::metrics
