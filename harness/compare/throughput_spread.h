// throughput_spread.h — a point's timing figures from its stored repeats and ranks: what `run`
// writes (run/judge_mode.cpp) and what `report` and `gate` recompute from the same samples before
// they trust a median, an interval, a samples/s figure (Note [Repeats, not steps] in
// stats/timing_spread.h) or a straggler (Note [Stragglers] in stats/straggler.h).
#pragma once

#include <string>
#include <vector>

#include "reports/run/run_record.h"

namespace ddpbench::compare {

reports::SpreadRecord spread_record(const std::vector<reports::RepeatRecord>& repeats);

// Who the ranks waited for (Note [Stragglers], stats/straggler.h); an empty record for a mode
// without ranks.
reports::StragglerRecord straggler_record(const std::vector<reports::RankTimingRecord>& ranks);

// samples_per_step / spread.median_step_s (0 when nothing was timed).
double samples_per_s_of(const reports::ThroughputRecord& t);

// Sets every figure of `t` that its stored samples determine, from its repeats, ranks,
// samples_per_step and bytes_allreduced_per_step: timed_steps, the spread, samples/s (and per
// device of `world_size`), the step time's percentiles, mean and CV over every repeat pooled, the
// weak reasons at `scaling_efficiency` (-1: not measured; Note [Weak figures]), the allreduce bus
// bandwidth, the straggler and, for a mode with ranks, phases.comm_wait_s (the mean over repeat
// 1's steps of the longest wait of any rank: a step's phases are the slowest rank's). `run` writes
// these and `report` and `gate` recompute them (audit_throughput).
void derive_figures(reports::ThroughputRecord& t, int64_t world_size, double scaling_efficiency);

// Throws InputError naming the first field (under `where`, e.g. "results[1].throughput") whose
// stored value its samples do not give: the spread and every figure derive_figures sets at
// `scaling_efficiency` (schema 9: a schema 8 report, without repeats, passes unchecked), the
// straggler and the ranks' waits (schema 10).
void audit_throughput(const std::string& where, const reports::ThroughputRecord& t,
                      int schema_version, int64_t world_size, double scaling_efficiency);

}  // namespace ddpbench::compare
