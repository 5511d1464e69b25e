// html_repeats.cpp — report.html's "Timing over repeats" section (html_figures.h): per timed
// point the spread of its repeats (run --repeats), not just a bar: the median step, its interval,
// the pooled CV, the repeat-to-repeat spread, and a strip with one dot per repeat's median over
// the interval shaded, so that a noisy point looks noisy. Escaped through xml_escape.
#include <fmt/format.h>

#include <algorithm>

#include "reports/format/escape.h"
#include "reports/run/html_figures.h"
#include "reports/run/junit_reporter.h"  // xml_escape

namespace ddpbench::reports::html {
namespace {

// One point's strip: the axis spans its repeat medians (and interval), 240 x 22 px.
std::string strip(const SpreadRecord& s) {
  const auto [lo_it, hi_it] =
      std::minmax_element(s.repeat_medians_s.begin(), s.repeat_medians_s.end());
  const double lo = std::min(*lo_it, s.median_low_s), hi = std::max(*hi_it, s.median_high_s);
  const double span = hi > lo ? hi - lo : 1;
  auto x = [&](double v) { return 10 + 220 * (v - lo) / span; };
  std::string svg = fmt::format(
      "<svg class=\"strip\" width=\"240\" height=\"22\" role=\"img\" aria-label=\"repeat "
      "medians\"><rect x=\"{:.1f}\" y=\"3\" width=\"{:.1f}\" height=\"16\" fill=\"#dbe9f6\"/>"
      "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"2\" y2=\"20\" stroke=\"#1f77b4\"/>",
      x(s.median_low_s), std::max(1.0, x(s.median_high_s) - x(s.median_low_s)), x(s.median_step_s),
      x(s.median_step_s));
  for (double m : s.repeat_medians_s) {
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"11\" r=\"3\" fill=\"#222\"/>", x(m));
  }
  return svg + "</svg>";
}

}  // namespace

std::string repeats_section(const RunReport& r) {
  std::string rows;
  for (const auto& m : r.results) {
    const SpreadRecord& s = m.throughput.spread;
    if (s.repeats == 0 || s.repeat_medians_s.empty()) continue;
    rows += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">"
        "{:.3f}</td><td class=\"num\">[{:.3f}, {:.3f}] ({:.0f}%)</td><td class=\"num\">{:.2f}"
        "</td><td class=\"num\">{:.1f}%</td><td>{}</td></tr>\n",
        xml_escape(name_str(m.mode)), m.world_size, s.repeats, 1e3 * s.median_step_s,
        1e3 * s.median_low_s, 1e3 * s.median_high_s, 100 * s.median_confidence, s.cv,
        100 * s.repeat_spread, strip(s));
  }
  if (rows.empty()) return "";
  return "<section id=\"repeats\"><h2>Timing over repeats</h2><p class=\"ref\">Each repeat of "
         "the perf phase ran in fresh processes (<code>--repeats</code>); its median step is one "
         "dot. The gate decides with these medians (docs/gate.md, \"A gate that knows noise\"); "
         "one "
         "repeat cannot show the noise between runs.</p><div class=\"wide\"><table><tr><th>mode"
         "</th><th>K</th><th>repeats</th><th>median step (ms)</th><th>interval of the median "
         "(ms)</th><th>CV of the steps</th><th>repeat spread</th><th>repeat medians</th></tr>\n" +
         rows + "</table></div></section>\n";
}

}  // namespace ddpbench::reports::html
