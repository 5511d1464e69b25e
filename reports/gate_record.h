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
  double delta = 0;     // current / baseline - 1 (0 when either is unmeasured)
  std::string verdict;  // "ok", "slower", "check failed", "check regressed", "missing",
                        // "nothing compared"
  std::string detail;
};

struct GateResult {
  std::vector<GatePoint> points;
  bool passed = true;
};

}  // namespace ddpbench::reports
