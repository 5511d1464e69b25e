// retimed_report.h — makes a report.json's point slower or faster the way a real run would record
// it: every timed step sample changed, and every figure computed from them recomputed with the
// product's own arithmetic (stats/), so that `report` and `gate` (which recompute the figures from
// the samples and refuse an edited one: compare/throughput_spread.h) read a consistent report. For
// tests of what the gate, `history` and `project` decide about timings.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace ddpbench::testing {

// Replaces `result`'s timed steps by `steps` (one vector per repeat) and every figure the samples
// determine: deterministic series for tests of `history` and `gate --history`, whatever the
// machine measured. A mode with ranks gets every rank computing each step of repeat 1 in full
// (no wait, no straggler), and every repeat a quiet runner (runner_load: no other process). The
// scaling efficiency stays: refigure() recomputes it.
void set_step_times(nlohmann::json& result, const std::vector<std::vector<double>>& steps);

// Multiplies every step time of `result` (its repeats, its ranks' compute and wait, its phases)
// by `factor` and recomputes every figure from them. The scaling efficiency stays: refigure().
void scale_step_times(nlohmann::json& result, double factor);

// Adds `seconds` of waiting for gradients to every timed step of `result` (every repeat, and in
// repeat 1 every rank's wait and the comm_wait_s phase) and recomputes every figure from them.
void add_comm_wait(nlohmann::json& result, double seconds);

// Every point's scaling efficiency against the report's single-device baseline (-1 without a timed
// one) and the figures that depend on it (the weak reasons): after retiming a point.
void refigure(nlohmann::json& doc);

}  // namespace ddpbench::testing
