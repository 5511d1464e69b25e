// gate_record.h — the plain records of a regression-gate verdict (compare/regression_gate.h
// produces them, gate_table.h formats them).
#pragma once

#include <string>
#include <vector>

namespace ddpbench::reports {

struct GatePoint {
  std::string key;  // scenario/mode/world_size
  double baseline_samples_per_s = 0;
  double current_samples_per_s = 0;
  // current / baseline - 1 of the two samples/s above (0 when either is unmeasured): what the
  // table shows beside them, whichever rule judged the point.
  double delta = 0;
  std::string verdict;  // "ok", "slower", "undecided", "check failed", "check regressed",
                        // "missing", "nothing compared"
  std::string detail;
  // How the throughput was judged: "repeats" (both runs measured repeats: the interval below and
  // the test, Note [Deciding a slowdown] in stats/speed_change.h), "single sample" (a run with one
  // repeat, or a schema 8 report: the ratio against the threshold, as before), "" (not timed).
  std::string timing_rule;
  // "repeats": the change the gate decided on, the Hodges-Lehmann shift of the repeat medians as
  // a throughput ratio (Note [Deciding a slowdown]), and its interval (99%).
  double shift = 0;
  double shift_low = 0, shift_high = 0;
  double p_value = 1;          // "repeats": two-sided Mann-Whitney U
  int64_t repeats_needed = 0;  // undecided: repeats per side that would decide
  // The repeats each side measured (0: a schema 8 report).
  int64_t baseline_repeats = 0, current_repeats = 0;
};

struct GateResult {
  std::vector<GatePoint> points;
  bool passed = true;
  // What the baseline column holds: "" for the baseline report's samples/s; gate --history sets
  // "lookback" (the samples/s at the median of each point's pooled lookback).
  std::string baseline_column;
  std::vector<std::string> notes;  // lines printed above the table (what the runs were judged by)
};

}  // namespace ddpbench::reports
