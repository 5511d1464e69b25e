// gate_throughput.h — the regression gate's throughput decision for a point both runs timed
// (compare/regression_gate.h): by the repeats of both sides (Note [Deciding a slowdown],
// stats/speed_change.h) and the loads they ran under (Note [A slowdown the load explains]), by
// the single-sample ratio where a side has fewer than two repeats, or by the paired rounds of one
// job (`ddpbench ab`, Note [Deciding a slowdown from paired rounds]).
#pragma once

#include <vector>

#include "compare/regression_gate.h"

namespace ddpbench::compare {

// The throughput of a point both runs timed: with repeats on both sides by Note [Deciding a
// slowdown] (stats/speed_change.h), else by the single-sample ratio the gate always used, saying
// so. A point whose checks already failed keeps that verdict; the figures are still filled in.
// The delta is always the ratio of the two samples/s the table shows; with repeats the decision
// is the shift's, which the detail names with its interval (the ratio of two medians and the
// Hodges-Lehmann shift can differ, even in sign).
void judge_throughput(const reports::ThroughputRecord& base, const reports::ThroughputRecord& cur,
                      double allowed, const std::vector<double>* lookback, GatePoint& p);

// gate --ab: the rounds of one job, paired (Note [Deciding a slowdown from paired rounds]). The
// samples/s columns are at the median of each side's rounds.
void judge_paired(const reports::ThroughputRecord& base, const reports::ThroughputRecord& cur,
                  double allowed, const GateThresholds::PairedRounds& rounds, GatePoint& p);

}  // namespace ddpbench::compare
