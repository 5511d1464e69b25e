// diff_tally.h — what one mode's walk of two traces (trace/mode_diff.h) records of each tensor it
// classes: the counts of the record and of each step's spread, the step x tensor map, and the
// differences kept for diff.json with the first difference and the first divergence.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "reports/diff/diff_record.h"

namespace ddpbench::trace {

class DiffTally {
 public:
  // Tallies into `record`; the map it adds is `mode`'s.
  DiffTally(const std::string& mode, reports::DiffRecord& record);

  // Counts a compared tensor, in the record and in its step's spread.
  void count(const reports::TensorDifference& d);
  // Keeps a difference: the first one, the first divergence, and the list up to its bound.
  void note(const reports::TensorDifference& d);
  // Puts a compared tensor of step `step` in the step x tensor map.
  void place(int64_t step, const reports::TensorDifference& d);
  // A tensor only one trace holds: a divergence, counted and kept, never placed in the map.
  void unmatched(const reports::TensorDifference& d);
  // Adds every step's spread and the map, each row as long as the map's steps, to the record.
  void finish();

 private:
  reports::DiffRecord& r_;
  reports::DiffMap map_;
  std::map<std::string, size_t> rows_;
  std::map<int64_t, size_t> columns_;
  std::map<int64_t, reports::StepSpread> spread_;
};

}  // namespace ddpbench::trace
