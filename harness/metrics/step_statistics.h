// step_statistics.h — per-step phase timings and their summary. A step's time is the max over
// ranks (a data-parallel step is as slow as its slowest rank); percentiles interpolate linearly
// between order statistics (numpy's default), so p50 of [1, 2] is 1.5. Throughput comes from the
// median step (robust to the odd slow step); the mean and the coefficient of variation stand beside
// it, as google/benchmark reports mean, median, stddev and CV. Formulas: reports/METRICS.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stats/step_figures.h"

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

// Note [Weak figures], the percentiles, the scaling efficiency and the bus bandwidth are plain
// arithmetic over the timed steps, which `report` and `gate` recompute from a report's samples:
// they live in stats/step_figures.h, where the audit and the tests reach them without torch.
using stats::allreduce_bus_bandwidth;
using stats::kMaxPlausibleEfficiency;
using stats::kMaxStepTimeCv;
using stats::kMinTimedSteps;
using stats::percentile;
using stats::scaling_efficiency;
using stats::weak_reasons;

}  // namespace ddpbench::metrics
