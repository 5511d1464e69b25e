// history_reporters.h — a HistoryRecord (`ddpbench history`) in ddpbench's formats: the text the
// command prints (also history.txt), history.csv (one row per point and commit: the trend) and
// history.html (per point a chart of samples/s with its interval per commit, the change points
// and the status; self-contained, in report.html's style). They only format.
#pragma once

#include <string>

#include "reports/history/history_record.h"

namespace ddpbench::reports {

inline constexpr const char* kHistoryTextFile = "history.txt";
inline constexpr const char* kHistoryCsvFile = "history.csv";
inline constexpr const char* kHistoryHtmlFile = "history.html";

std::string render_history_text(const HistoryReport& r);
std::string render_history_csv(const HistoryReport& r);
std::string render_history_html(const HistoryReport& r);

}  // namespace ddpbench::reports
