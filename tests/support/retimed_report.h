// retimed_report.h — makes a report.json's point slower or faster the way a real run would record
// it: every timed step sample scaled, and every figure computed from them scaled with them, so
// that `report` and `gate` (which recompute the figures from the samples and refuse an edited
// one) read a consistent report. For tests of what the gate and `project` decide about timings.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace ddpbench::testing {

// Replaces `result`'s timed steps by `steps` (one vector per repeat) and every figure the gate
// reads from them (stats/timing_spread.h, the product's own arithmetic): deterministic series for
// tests of `history` and `gate --history`, whatever the machine measured.
void set_step_times(nlohmann::json& result, const std::vector<std::vector<double>>& steps);

// Multiplies every step time of `result`'s throughput (its repeats, medians, interval,
// percentiles and mean) by `factor` and divides samples/s by it.
void scale_step_times(nlohmann::json& result, double factor);

}  // namespace ddpbench::testing
