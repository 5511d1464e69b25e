// timing_spread.h — what the timed steps of a point's repeats say (run --repeats R: the perf phase
// R times, each in fresh processes). The unit of evidence is the repeat, not the step: steps of
// one process share its placement on the cores, its allocator and its cache state, so they are
// not independent samples of the run-to-run noise a gate meets (Note [Repeats, not steps]).
//
// Note [Repeats, not steps]
// Measured on the project's 2-core machine (toy_cnn, ddp, 2 ranks, 200 timed steps per run, 10
// runs): the medians of the runs spread with a CV of 18%, while the steps within a run (CV 44%)
// predict a spread of the median of 1.25 * 0.44 / sqrt(200) = 4%. A test that counted 200 steps a
// side as 200 independent samples would call most pairs of identical runs different. So each
// repeat contributes one number, its median step, and the statistics of a point are those of its
// repeat medians: the median of them (what samples/s divides by), the order-statistic interval of
// it, and their spread. The steps are kept for the pooled CV and percentiles, and for anyone who
// wants to look.
#pragma once

#include <cstdint>
#include <vector>

#include "stats/rank_statistics.h"

namespace ddpbench::stats {

// The confidence of the interval a report gives for a point's median step (a description of the
// run; the gate decides at kGateConfidence, speed_change.h).
inline constexpr double kReportConfidence = 0.95;

struct TimingSpread {
  int64_t repeats = 0;
  std::vector<double> repeat_medians;  // seconds, repeat order
  double median = 0;                   // of the repeat medians
  Interval median_interval;            // at kReportConfidence, or what the repeats allow
  double cv = 0;                       // of every timed step pooled (sample stddev / mean)
  double repeat_spread = 0;            // (max - min) / median of the repeat medians
};

// `step_times[r]` holds repeat r's timed step times (seconds); repeats without steps are ignored.
TimingSpread timing_spread(const std::vector<std::vector<double>>& step_times);

}  // namespace ddpbench::stats
