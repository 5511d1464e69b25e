// progress_line.h — the one-line progress display of long runs on a terminal: steps done, ETA and
// the current loss, redrawn in place at most ten times a second. Nothing is printed when stdout
// is not a TTY (CI logs stay clean) or with --quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ddpbench::training {

// Whether a progress line should be shown: stdout is a terminal and --quiet was not given.
bool progress_wanted(bool quiet);

class ProgressLine {
 public:
  ProgressLine(bool enabled, std::string label, int64_t total_steps);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `loss` NaN = unknown (e.g. DDP steps seen from the launcher).
  void update(int64_t steps_done, double loss);

 private:
  bool enabled_;
  std::string label_;
  int64_t total_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool drawn_ = false;
};

}  // namespace ddpbench::training
