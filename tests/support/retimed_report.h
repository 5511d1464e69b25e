// retimed_report.h — makes a report.json's point slower or faster the way a real run would record
// it: every timed step sample scaled, and every figure computed from them scaled with them, so
// that `report` and `gate` (which recompute the figures from the samples and refuse an edited
// one) read a consistent report. For tests of what the gate and `project` decide about timings.
#pragma once

#include <nlohmann/json.hpp>

namespace ddpbench::testing {

// Multiplies every step time of `result`'s throughput (its repeats, medians, interval,
// percentiles and mean) by `factor` and divides samples/s by it.
void scale_step_times(nlohmann::json& result, double factor);

}  // namespace ddpbench::testing
