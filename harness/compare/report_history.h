// report_history.h — `ddpbench history` and `gate --history`: a series of reports of successive
// commits (oldest first), every point's throughput over them judged by stats/change_points.h
// (change points, each commit against its lookback, a HUD-like status). The reports must be of
// one configuration, as the gate's two are (regression_gate.h refuses, naming the field).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/history/history_record.h"
#include "reports/run/run_record.h"

namespace ddpbench::compare {

struct LabelledReport {
  std::string label;
  reports::RunReport report;
};

// Whether `a` and `b` are one run (a copy, or the same folder given twice): the same host, start
// time and timed steps. Distinct runs never time the same steps to the last bit.
bool same_run(const reports::RunReport& a, const reports::RunReport& b);

// Throws InputError for no report, one run given twice (same_run), reports of different
// configurations, or a point whose reports lack repeats (a schema 8 report: the series needs its
// spread). One report is judged: insufficient data (Note [History status]).
reports::HistoryReport judge_report_history(const std::vector<LabelledReport>& series,
                                            double max_slowdown, int64_t lookback);

// `gate --history` (the current run is not in `series`: execute_gate leaves it out): per point key,
// the repeat medians of the newest `lookback` commits that were not slower than their own lookback:
// the baseline distribution the current run is judged against.
std::map<std::string, std::vector<double>> lookback_medians(
    const std::vector<LabelledReport>& series, double max_slowdown, int64_t lookback);

}  // namespace ddpbench::compare
