// regression_gate.h — the CI gate: compares a current report with a baseline, point by point
// (scenario, mode, world size). A point fails when a check fails now, when a check that passed in
// the baseline no longer passes, or when samples/s dropped by more than the allowed slowdown.
// Reports of different configurations (scenario, dtype, backend) are not compared at all.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/run_record.h"

namespace ddpbench::compare {

struct GateThresholds {
  double max_slowdown = 0.05;  // fraction of baseline samples/s that may be lost
  // Per point overrides, keyed "scenario/mode/world_size".
  std::map<std::string, double> point_max_slowdown;
};

struct GatePoint {
  std::string key;  // scenario/mode/world_size
  double baseline_samples_per_s = 0;
  double current_samples_per_s = 0;
  double delta = 0;     // current / baseline - 1 (0 when either is unmeasured)
  std::string verdict;  // "ok", "slower", "check failed", "check regressed", "missing"
  std::string detail;
};

struct GateResult {
  std::vector<GatePoint> points;
  bool passed = true;
};

// Throws InputError when the two reports' configurations differ (naming the field and values).
GateResult run_gate(const reports::RunReport& baseline, const reports::RunReport& current,
                    const GateThresholds& thresholds);

}  // namespace ddpbench::compare
