// change_points.h — `ddpbench history`'s statistics over a series of runs of successive commits:
// where the level of a point's step time changed (change points), and a status for the newest
// commits against the lookback before them, as PyTorch's HUD and conbench give it.
//
// Note [Finding change points]
// The series is each commit's median step (the median of its repeat medians), in log seconds so
// that a step is a ratio. Binary segmentation of a piecewise-constant fit with a robust cost, as
// asv's step detection fits one: a segment's cost is the summed absolute deviation from its
// median; a segment is split where the split lowers the cost the most, if it lowers it by more
// than the penalty 2 * sigma * ln(n); no segment is shorter than 3 commits, so one outlier commit
// never becomes a level of its own (with 2, a 30% outlier made two change points around it),
// except at either end of the series, where 2 are enough (an outlier and a normal commit make no
// level: splitting them off lowers no cost), so that a step two commits from the end, which the
// status already calls a regression, is placed where it starts; with 3 the only cut left was a
// commit early ("change point at c4" for a slowdown from c5 of c1..c6).
// sigma is estimated from the series itself, robustly (1.4826 * the median absolute successive
// difference / sqrt 2: a step moves one difference, not their median), and floored at the noise
// of one commit's median as its repeats give it. Measured on 300 synthetic series of 30 commits
// x 5 repeats each (log-normal noise per repeat of 3% / 6%): no change point in any series
// without a step (penalty 1.0 found one in 2% of them), a 10% step at commit 20 found at 20 +-1
// in 300/300 (3%) and 287/300 (6%), a 30% outlier commit never a change point. With levels of 2
// at the ends, measured the same way at 3% noise: a 10% step at commit 28 (two from the end) is
// found at 28 in 182/300 series, a commit early in 1, not at all in 117 (before: at 27, a commit
// early, in 7, never at 28); at commit 2, at 2 in 172/300 (before: at 3 in 8); at commit 27, at 27
// in 295/300 and at 28 in 1 (before: 296 and 0); the series without a step, the step at 20 and
// the outliers exactly as before, at 3% and 6%.
//
// Note [History status]
// Each commit is judged against its lookback, the pooled repeat medians of up to `lookback`
// commits before it that were not themselves slower (a regression must not become the baseline
// of the commits after it), by judge_speed (speed_change.h). The newest commits decide:
// - regression: the last two or more commits in a row are slower than their lookback;
// - suspicious: some commit was slower, but not the last two in a row (one outlier, an earlier
//   run that recovered, or only the newest commit: it needs a second to confirm);
// - insufficient data: the newest commit's lookback holds fewer than kMinGateRepeats repeat
//   medians, or the series fewer than 3 commits;
// - ok: otherwise.
// A commit slower than its lookback whose repeats ran under more load from other processes than
// the lookback's (Note [A slowdown the load explains], the unpaired rule) is not counted slower:
// the load, not the commit, may explain it, and the commit's line says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stats/speed_change.h"

namespace ddpbench::stats {

struct ChangePoint {
  size_t index = 0;   // the first commit of the new level
  double change = 0;  // throughput after / before - 1, from the two segments' mean levels
};

// `levels` are per-commit log step times, `floor_sigma` the least noise to assume (>= 0).
std::vector<ChangePoint> find_change_points(const std::vector<double>& levels, double floor_sigma);

enum class HistoryStatus { kOk, kRegression, kSuspicious, kInsufficientData };

struct CommitJudgement {
  SpeedChange against_lookback;  // undecided when the lookback was too small
  bool slower = false;
  // Slower than the lookback, but run under more load from other processes than the lookback's
  // commits by Note [A slowdown the load explains] (stats/load_rule.h): not counted as slower.
  bool load_explains = false;
  double lookback_load = 0, load = 0;  // the medians of the two samples of shares, when compared
  size_t lookback_commits = 0;
  size_t lookback_repeats = 0;  // the repeat medians pooled from them
};

// Note [History status]'s lookback of the commit at `before` (== the number of commits: the one
// after the newest, as `gate --history` judges it): the repeat medians of up to `lookback`
// commits before it that `judged` did not find slower, newest first; `commits_used` (if given)
// says how many commits they came from.
std::vector<double> lookback_pool(const std::vector<std::vector<double>>& repeat_medians,
                                  const std::vector<CommitJudgement>& judged, size_t before,
                                  size_t lookback, size_t* commits_used = nullptr);

struct HistoryJudgement {
  std::vector<CommitJudgement> commits;
  HistoryStatus status = HistoryStatus::kInsufficientData;
  std::vector<ChangePoint> change_points;
};

inline constexpr size_t kDefaultLookback = 20;

// `repeat_medians[c]` are commit c's repeat medians (seconds per step), oldest commit first;
// `others_shares[c]`, where given, the share of the CPUs other processes took during each of its
// repeats (empty for a commit that did not measure it).
HistoryJudgement judge_history(const std::vector<std::vector<double>>& repeat_medians,
                               double allowed, size_t lookback,
                               const std::vector<std::vector<double>>* others_shares = nullptr);

const char* status_name(HistoryStatus s);

}  // namespace ddpbench::stats
