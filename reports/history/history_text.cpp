// history_text.cpp — see history_reporters.h: the summary `ddpbench history` prints.
#include <fmt/format.h>

#include "reports/history/history_reporters.h"

namespace ddpbench::reports {

std::string render_history_text(const HistoryReport& r) {
  std::string out = fmt::format(
      "history: {} commit{}, {} -> {}; a commit is slower when significantly more than {:.1f}% "
      "below its lookback (up to {} commits)\n",
      r.labels.size(), r.labels.size() == 1 ? "" : "s", r.labels.empty() ? "" : r.labels.front(),
      r.labels.empty() ? "" : r.labels.back(), 100 * r.max_slowdown, r.lookback);
  for (const std::string& note : r.notes) out += "history: " + note + "\n";
  for (const HistoryPoint& p : r.points) {
    out += fmt::format("\n{}: {}: {}\n", p.key, p.status, p.detail);
    bool any_change = false;
    for (const HistoryCommit& c : p.commits) {
      if (!c.starts_level) continue;
      out += fmt::format("  change point at {}: {:+.1f}% samples/s from there on\n", c.label,
                         100 * c.level_change);
      any_change = true;
    }
    if (!any_change) out += "  no change point\n";
    if (!p.commits.empty()) {
      const HistoryCommit& newest = p.commits.back();
      out += fmt::format("  newest {}: {:.1f} samples/s, {}\n", newest.label, newest.samples_per_s,
                         newest.against_lookback);
    }
  }
  return out + (r.regression ? "\nhistory: REGRESSION\n" : "\nhistory: no regression\n");
}

}  // namespace ddpbench::reports
