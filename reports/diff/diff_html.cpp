// diff_html.cpp — render_diff_html (diff_reporters.h): diff.html. Sections are separate
// functions; all text is escaped through xml_escape. The map draws one cell per tensor and step:
// white where identical, blue where the difference is rounding (darker as it nears the limit),
// red where it diverged; the first divergence (else the first difference) is outlined.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/diff/diff_reporters.h"
#include "reports/format/escape.h"
#include "reports/format/html_style.h"
#include "reports/run/junit_reporter.h"  // xml_escape

namespace ddpbench::reports {
namespace {

constexpr const char* kDiffStyle = R"(
.map text{font-size:10px;fill:#333} .map .identical{fill:#ffffff;stroke:#e4e4e4}
.map .diverged{stroke:#fff} .map .first{stroke:#000;stroke-width:2}
.swatch{display:inline-block;width:12px;height:12px;border:1px solid #ccc;vertical-align:middle}
tr.differs td{background:#fff4e5}
)";

std::string verdict_section(const DiffRecord& r) {
  std::string s = fmt::format("<section id=\"verdict\" class=\"{}\"><h2>{}</h2><ul>\n",
                              r.failed ? "fail" : "pass", xml_escape(diff_verdict_line(r)));
  const auto item = [](const char* label, const std::optional<TensorDifference>& d) {
    return fmt::format("<li><b>{}</b>: {}</li>\n", label,
                       d ? xml_escape(describe_difference(*d)) : std::string("none"));
  };
  s += item("first difference", r.first_difference);
  s += item("first divergence", r.first_divergence);
  for (const std::string& n : r.notes) s += fmt::format("<li>{}</li>\n", xml_escape(n));
  return s + "</ul></section>\n";
}

std::string environment_section(const DiffRecord& r) {
  std::string s =
      "<section id=\"environment\"><h2>Environment, side by side</h2><p class=\"ref\">Rows that "
      "differ are shaded: they are what the diff compares.</p><table>\n<tr><th>field</th><th>A"
      "</th><th>B</th></tr>\n";
  for (const EnvironmentField& f : r.environment) {
    s += fmt::format("<tr{}><th>{}</th><td>{}</td><td>{}</td></tr>\n",
                     f.differs() ? " class=\"differs\"" : "", xml_escape(f.field), xml_escape(f.a),
                     xml_escape(f.b));
  }
  s += "</table><h3>Experiment (the same in both)</h3><table>\n";
  for (const auto& [k, v] : r.experiment) {
    if (k == "scenario_yaml") continue;
    s += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  }
  return s + "</table></section>\n";
}

// A rounding cell's blue deepens with log10(error / limit) from -8 (faint) to 0 (the limit).
std::string cell_fill(DiffClass c, double log_error, double limit) {
  if (c == DiffClass::kDiverged) return "#d62728";
  if (c == DiffClass::kGrowth) return "#c9b3e6";  // grown from rounding: not judged on its own
  const double t = std::clamp((log_error - std::log10(limit) + 8.0) / 8.0, 0.0, 1.0);
  const int light = static_cast<int>(235 - 150 * t);
  return fmt::format("rgb({},{},255)", light, light);
}

bool is_cell(const std::optional<TensorDifference>& d, const std::string& mode,
             const std::string& row, int64_t step) {
  return d && d->mode == mode && d->step == step && d->phase + " " + d->tensor == row;
}

// Whether any step of `row` differs: the map draws only such rows.
bool row_differs(const DiffMap& m, size_t row) {
  for (const auto& c : m.classes[row]) {
    if (c && *c != DiffClass::kIdentical) return true;
  }
  return false;
}

std::string map_svg(const DiffMap& m, const DiffRecord& r) {
  constexpr int kLabel = 300, kCell = 14, kRow = 11, kTop = 18;
  std::vector<size_t> drawn;
  for (size_t row = 0; row < m.rows.size(); ++row) {
    if (row_differs(m, row)) drawn.push_back(row);
  }
  const size_t folded = m.rows.size() - drawn.size();
  std::string note = folded == 0
                         ? std::string()
                         : fmt::format(
                               "<p class=\"ref\">{} of {} tensors identical at every step they "
                               "were computed (not drawn).</p>\n",
                               folded, m.rows.size());
  if (drawn.empty()) return note;
  const int width = kLabel + kCell * static_cast<int>(std::max<size_t>(m.steps.size(), 1)) + 10;
  const int height = kTop + kRow * static_cast<int>(drawn.size()) + 4;
  const double limit = r.first_difference ? r.first_difference->limit : 1.0;
  const std::optional<TensorDifference>& marked =
      r.first_divergence ? r.first_divergence : r.first_difference;
  std::string s =
      note +
      fmt::format(
          "<svg class=\"map\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
          "role=\"img\" aria-label=\"{} tensors by step\">\n",
          width, height, xml_escape(m.mode));
  for (size_t c = 0; c < m.steps.size(); ++c) {
    s += fmt::format("<text x=\"{}\" y=\"12\">{}</text>\n", kLabel + kCell * c + 2, m.steps[c]);
  }
  for (size_t i = 0; i < drawn.size(); ++i) {
    const size_t row = drawn[i];
    const int y = kTop + kRow * static_cast<int>(i);
    s += fmt::format("<text x=\"0\" y=\"{}\">{}</text>\n", y + 9, xml_escape(m.rows[row]));
    for (size_t c = 0; c < m.steps.size(); ++c) {
      if (!m.classes[row][c]) continue;  // not computed at this step
      const DiffClass cls = *m.classes[row][c];
      const bool first = is_cell(marked, m.mode, m.rows[row], m.steps[c]);
      const std::string title =
          cls == DiffClass::kIdentical
              ? "identical"
              : fmt::format("{}: log10 error {:.2f}", diff_class_name(cls), *m.cells[row][c]);
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"{}{}\"{}><title>step {} {}: "
          "{}</title></rect>\n",
          kLabel + kCell * c, y, kCell - 1, kRow - 1, diff_class_name(cls), first ? " first" : "",
          cls == DiffClass::kIdentical
              ? std::string()
              : fmt::format(" fill=\"{}\"", cell_fill(cls, *m.cells[row][c], limit)),
          m.steps[c], xml_escape(m.rows[row]), xml_escape(title));
    }
  }
  return s + "</svg>\n";
}

std::string maps_section(const DiffRecord& r) {
  std::string s =
      "<section id=\"maps\"><h2>Tensor by step</h2><p class=\"ref\">One row per tensor in the "
      "order each step computes them, one column per step. <span class=\"swatch\"></span> "
      "identical, <span class=\"swatch\" style=\"background:rgb(85,85,255)\"></span> rounding "
      "(darker nearer the limit), <span class=\"swatch\" style=\"background:#c9b3e6\"></span> "
      "growth from earlier rounding, <span class=\"swatch\" style=\"background:#d62728\"></span> "
      "diverged; the first divergence (or first difference) is outlined. Hover a cell for its "
      "error. Only tensors that differ at some step are drawn.</p>\n";
  for (const DiffMap& m : r.maps) {
    s +=
        fmt::format("<h3>{}</h3><div class=\"wide\">{}</div>\n", xml_escape(m.mode), map_svg(m, r));
  }
  return s + "</section>\n";
}

std::string spread_section(const DiffRecord& r) {
  std::string s =
      "<section id=\"spread\"><h2>Per step</h2><table>\n<tr><th>mode</th><th>step</th><th>"
      "compared</th><th>identical</th><th>rounding</th><th>growth</th><th>diverged</th><th>worst "
      "normalized error</th><th>in</th></tr>\n";
  for (const StepSpread& p : r.spread) {
    const int64_t differ = p.rounding + p.growth + p.diverged;
    s += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        p.diverged > 0 ? "fail"
        : differ > 0   ? "rounding"
                       : "",
        xml_escape(p.mode), p.step, p.compared, p.identical, p.rounding, p.growth, p.diverged,
        differ > 0 ? fmt::format("{:.3g}", p.worst_error) : "-", xml_escape(p.worst_tensor));
  }
  return s + "</table></section>\n";
}

}  // namespace

std::string render_diff_html(const DiffRecord& r) {
  const std::string* scenario = nullptr;
  for (const auto& [k, v] : r.experiment) {
    if (k == "scenario") scenario = &v;
  }
  const std::string name = scenario ? *scenario : "?";
  return fmt::format(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ddpbench "
             "diff: {}</title><style>{}{}</style></head><body>\n<h1>ddpbench diff: {}</h1><p>A: "
             "<code>{}</code> · B: <code>{}</code></p>\n",
             xml_escape(name), html::kReportStyle, kDiffStyle, xml_escape(name),
             xml_escape(r.a.path), xml_escape(r.b.path)) +
         verdict_section(r) + maps_section(r) + spread_section(r) + environment_section(r) +
         "</body></html>\n";
}

}  // namespace ddpbench::reports
