// history_record.h — the plain record of `ddpbench history`: per point (scenario/mode/world
// size), each commit's throughput with its interval, whether it was slower than its lookback, the
// change points and the point's status (compare/report_history.h computes it; Notes [Finding
// change points] and [History status] in stats/change_points.h say how).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::reports {

struct HistoryCommit {
  std::string label;  // the run folder's (or file's) name: the commit it measured
  int64_t repeats = 0;
  double samples_per_s = 0;  // samples per step / the median of the repeat medians
  // samples/s at the median step's interval (stats/timing_spread.h), and its confidence.
  double samples_per_s_low = 0, samples_per_s_high = 0;
  double interval_confidence = 0;
  bool slower = false;           // significantly slower than its lookback (Note [History status])
  std::string against_lookback;  // "-10.2% [-12.0%, -8.1%] against 19 commits", or why not
  bool starts_level = false;     // a change point: the first commit of a new level
  double level_change = 0;       // starts_level: throughput after / before - 1
};

struct HistoryPoint {
  std::string key;     // scenario/mode/world_size
  std::string status;  // "ok", "regression", "suspicious", "insufficient data"
  std::string detail;  // the status in words
  std::vector<HistoryCommit> commits;
};

struct HistoryReport {
  double max_slowdown = 0.05;
  int64_t lookback = 20;
  std::vector<std::string> labels;  // every commit, oldest first
  std::vector<HistoryPoint> points;
  bool regression = false;  // some point's status is "regression"
  // What the series left out and why ("left out 'c3': its run failed (failure.json, no
  // report.json)").
  std::vector<std::string> notes;
};

}  // namespace ddpbench::reports
