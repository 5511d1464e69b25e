// throughput_spread.h — a point's timing figures from its stored repeats and ranks: what `run`
// writes (run/judge_mode.cpp) and what `report` and `gate` recompute from the same samples before
// they trust a median, an interval, a samples/s figure (Note [Repeats, not steps] in
// stats/timing_spread.h) or a straggler (Note [Stragglers] in stats/straggler.h).
#pragma once

#include <string>
#include <vector>

#include "reports/run_record.h"

namespace ddpbench::compare {

reports::SpreadRecord spread_record(const std::vector<reports::RepeatRecord>& repeats);

// Who the ranks waited for (Note [Stragglers], stats/straggler.h); an empty record for a mode
// without ranks.
reports::StragglerRecord straggler_record(const std::vector<reports::RankTimingRecord>& ranks);

// samples_per_step / spread.median_step_s (0 when nothing was timed).
double samples_per_s_of(const reports::ThroughputRecord& t);

// Throws InputError naming the first field (under `where`, e.g. "results[ddp/2].throughput") whose
// stored value its samples do not give: the spread (schema 9: a schema 8 report, without repeats,
// passes unchecked) and the straggler (schema 10).
void audit_throughput(const std::string& where, const reports::ThroughputRecord& t,
                      int schema_version);

}  // namespace ddpbench::compare
