// html_ranks.cpp — report.html's "Ranks" section (html_figures.h): per ddp or zero point, every
// rank's compute time at each timed step as a heat map (ranks down, steps across, darker =
// longer, the straggler's row outlined), beside its scores against the fastest rank and its own
// best step, and the straggler sentence (Note [Stragglers]). Escaped through xml_escape.
#include <fmt/format.h>

#include <algorithm>

#include "reports/run/html_figures.h"
#include "reports/format/escape.h"
#include "reports/run/junit_reporter.h"  // xml_escape

namespace ddpbench::reports::html {
namespace {

constexpr int kCell = 9;    // px per step
constexpr int kRow = 16;    // px per rank
constexpr int kLabel = 56;  // px for "rank N"

// The heat map of one point: shade by compute between the point's fastest and slowest step.
std::string heat_map(const ThroughputRecord& t) {
  double lo = 1e300, hi = 0;
  size_t steps = 0;
  for (const auto& r : t.ranks) {
    for (double c : r.compute_s) lo = std::min(lo, c), hi = std::max(hi, c);
    steps = std::max(steps, r.compute_s.size());
  }
  const double span = hi > lo ? hi - lo : 1;
  const int width = kLabel + static_cast<int>(steps) * kCell + 4;
  const int height = static_cast<int>(t.ranks.size()) * kRow + 4;
  std::string svg = fmt::format(
      "<svg class=\"heat\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"compute time per "
      "rank and timed step\">",
      width, height);
  for (size_t i = 0; i < t.ranks.size(); ++i) {
    const RankTimingRecord& r = t.ranks[i];
    const int y = 2 + static_cast<int>(i) * kRow;
    svg += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"11\">rank {}</text>", y + 12, r.rank);
    for (size_t s = 0; s < r.compute_s.size(); ++s) {
      const double shade = (r.compute_s[s] - lo) / span;  // 0 fastest .. 1 slowest
      const int light = static_cast<int>(235 - 175 * shade);
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},255)\">"
          "<title>rank {} step {}: compute {:.3f} ms, wait {:.3f} ms</title></rect>",
          kLabel + static_cast<int>(s) * kCell, y, kCell - 1, kRow - 2, light, light, r.rank, s,
          1e3 * r.compute_s[s], 1e3 * r.comm_wait_s[s]);
    }
    if (r.rank == t.straggler.rank) {
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#d62728\" "
          "stroke-width=\"2\"/>",
          kLabel - 1, y - 1, static_cast<int>(r.compute_s.size()) * kCell + 1, kRow);
    }
  }
  return svg + "</svg>";
}

std::string scores(const ThroughputRecord& t) {
  std::string rows;
  for (size_t i = 0; i < t.ranks.size() && i < t.straggler.vs_fastest.size(); ++i) {
    rows +=
        fmt::format("{}rank {}: {:.2f}x the fastest, {:.2f}x its best", rows.empty() ? "" : "; ",
                    t.ranks[i].rank, t.straggler.vs_fastest[i], t.straggler.vs_own_best[i]);
  }
  return rows;
}

}  // namespace

std::string ranks_section(const RunReport& r) {
  std::string rows;
  for (const auto& m : r.results) {
    const ThroughputRecord& t = m.throughput;
    if (t.ranks.empty()) continue;
    rows += fmt::format(
        "<tr><td>{} K={}</td><td>{}<br><span class=\"ref\">{}</span></td><td>{}</td></tr>\n",
        xml_escape(name_str(m.mode)), m.world_size, xml_escape(t.straggler.summary),
        xml_escape(scores(t)), heat_map(t));
  }
  if (rows.empty()) return "";
  return "<section id=\"ranks\"><h2>Ranks: who the others wait for</h2><p class=\"ref\">Each "
         "rank's compute per timed step (the step less its wait for gradient collectives); darker "
         "is longer, a red outline marks the straggler (reports/METRICS.md, \"Hangs, desyncs and "
         "stragglers\": the "
         "rule and its figures).</p><div class=\"wide\"><table><tr><th>point</th><th>finding"
         "</th><th>compute per rank and step</th></tr>\n" +
         rows + "</table></div></section>\n";
}

}  // namespace ddpbench::reports::html
