// history_csv.cpp — see history_reporters.h: the trend, one row per point and commit.
#include <fmt/format.h>

#include "reports/run/csv_reporter.h"  // csv_field
#include "reports/history/history_reporters.h"
#include "reports/format/escape.h"

namespace ddpbench::reports {

std::string render_history_csv(const HistoryReport& r) {
  std::string out =
      "point,commit,label,repeats,samples_per_s,samples_per_s_low,samples_per_s_high,"
      "interval_confidence,slower_than_lookback,against_lookback,change_point,level_change,"
      "status\n";
  for (const HistoryPoint& p : r.points) {
    for (size_t i = 0; i < p.commits.size(); ++i) {
      const HistoryCommit& c = p.commits[i];
      out += fmt::format("{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{:.9g},{}\n",
                         csv_field(p.key), i, csv_field(c.label), c.repeats, c.samples_per_s,
                         c.samples_per_s_low, c.samples_per_s_high, c.interval_confidence,
                         c.slower ? "true" : "false", csv_field(c.against_lookback),
                         c.starts_level ? "true" : "false", c.level_change, csv_field(p.status));
    }
  }
  return out;
}

}  // namespace ddpbench::reports
