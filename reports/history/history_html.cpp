// history_html.cpp — see history_reporters.h: per point, samples/s with its interval per commit
// (a chart: x is the commit's place in the series), the change points and the status, then the
// table of commits. All text goes through xml_escape.
#include <fmt/format.h>

#include "reports/history/history_reporters.h"
#include "reports/format/escape.h"
#include "reports/format/html_style.h"
#include "reports/run/junit_reporter.h"  // xml_escape
#include "reports/format/svg_chart.h"

namespace ddpbench::reports {
namespace {

constexpr const char* kHistoryStyle = R"(
.status{padding:4px 10px;border-radius:6px;display:inline-block;font-weight:600}
.status.ok{background:#e6f4ea} .status.regression{background:#fce8e6}
.status.suspicious{background:#fff4e5} .status.insufficient{background:#eeeeee}
tr.slower td{background:#fce8e6} tr.level td:first-child{border-left:4px solid #d62728}
)";

std::string status_class(const std::string& status) {
  return status == "insufficient data" ? "insufficient" : status;
}

std::string point_section(const HistoryPoint& p, size_t index) {
  Series value{"samples/s", "#1f77b4", {}, false};
  Series low{"interval low", "#7f7f7f", {}, true};
  Series high{"interval high", "#7f7f7f", {}, true};
  Series slower{"slower", "#d62728", {}, false, true};
  std::vector<double> ticks;
  for (size_t i = 0; i < p.commits.size(); ++i) {
    const HistoryCommit& c = p.commits[i];
    const double x = static_cast<double>(i);
    value.points.emplace_back(x, c.samples_per_s);
    low.points.emplace_back(x, c.samples_per_s_low);
    high.points.emplace_back(x, c.samples_per_s_high);
    if (c.slower) slower.points.emplace_back(x, c.samples_per_s);
    if (c.starts_level || i == 0 || i + 1 == p.commits.size()) ticks.push_back(x);
  }
  std::vector<Series> series = {value, low, high};
  if (!slower.points.empty()) series.push_back(slower);
  ChartText text{fmt::format("history-chart-{}", index),
                 p.key,
                 "commit (its place in the series; ticks at change points)",
                 "samples/s",
                 ticks,
                 false};
  std::string s = fmt::format(
      "<section id=\"history-point-{}\"><h2>{}</h2><p><span class=\"status {}\">{}</span> "
      "{}</p>\n",
      index, xml_escape(p.key), status_class(p.status), xml_escape(p.status), xml_escape(p.detail));
  s += "<div class=\"wide\">" + line_chart(text, series) + "</div>\n";
  s += "<table><tr><th>#</th><th>commit</th><th>repeats</th><th>samples/s</th><th>interval of "
       "the median</th><th>against its lookback</th><th>change point</th></tr>\n";
  for (size_t i = 0; i < p.commits.size(); ++i) {
    const HistoryCommit& c = p.commits[i];
    std::string cls;
    if (c.slower) cls += " slower";
    if (c.starts_level) cls += " level";
    s += fmt::format(
        "<tr class=\"{}\"><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{:.1f}</td><td class=\"num\">[{:.1f}, {:.1f}] ({:.0f}%)</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        cls, i, xml_escape(c.label), c.repeats, c.samples_per_s, c.samples_per_s_low,
        c.samples_per_s_high, 100 * c.interval_confidence, xml_escape(c.against_lookback),
        c.starts_level ? fmt::format("{:+.1f}% from here", 100 * c.level_change) : "");
  }
  return s + "</table></section>\n";
}

}  // namespace

std::string render_history_html(const HistoryReport& r) {
  std::string s = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ddpbench "
      "history</title><style>{}{}</style></head><body>\n<h1>ddpbench history</h1>\n<p>{} "
      "commits, <code>{}</code> to <code>{}</code>. A commit is slower when its throughput is "
      "significantly more than {:.1f}% below its lookback (up to {} earlier commits that were "
      "not slower themselves); a point is a <b>regression</b> when the last two or more commits "
      "in a row are, <b>suspicious</b> when some earlier commit was. Change points: binary "
      "segmentation of the commits' median steps (reports/METRICS.md, \"The gate on a noisy "
      "machine\").</p>\n",
      html::kReportStyle, kHistoryStyle, r.labels.size(),
      xml_escape(r.labels.empty() ? "" : r.labels.front()),
      xml_escape(r.labels.empty() ? "" : r.labels.back()), 100 * r.max_slowdown, r.lookback);
  for (const std::string& note : r.notes) s += fmt::format("<p>{}</p>\n", xml_escape(note));
  for (size_t i = 0; i < r.points.size(); ++i) s += point_section(r.points[i], i);
  return s + "</body></html>\n";
}

}  // namespace ddpbench::reports
