// projection_html_reporter.cpp — projection.html: one self-contained page. The input's measured
// DDP curve (solid) and, per projected link, its dashed extension labelled as a projection, for
// step time and weak-scaling efficiency; the validation against the input's held-out world
// sizes; what the projection assumed; and the projected table. All markup goes through
// xml_escape; charts come from svg_chart.h.
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "reports/run/junit_reporter.h"  // xml_escape
#include "reports/projection/projection_reporters.h"
#include "reports/format/escape.h"
#include "reports/format/svg_chart.h"

namespace ddpbench::reports {
namespace {

constexpr const char* kMeasuredColor = "#d62728";  // ddp's colour in report.html
constexpr const char* kLinkColors[] = {"#1f77b4", "#9467bd", "#ff7f0e",
                                       "#17becf", "#8c564b", "#e377c2"};

std::string html_ms(double s) { return fmt::format("{:.3f} ms", 1e3 * s); }

const MeasuredScalingPoint* reference_point(const ProjectionReport& r) {
  for (const MeasuredScalingPoint& m : r.measured) {
    if (m.world_size == r.basis.reference_world_size) return &m;
  }
  return nullptr;
}

// `value` of a measured or projected point: what one chart plots.
struct Plotted {
  const char* id;
  const char* title;
  const char* y_label;
  double (*measured)(const MeasuredScalingPoint&);  // < 0: not measured, left out
  double (*projected)(const ProjectedPoint&);
};

std::string chart(const ProjectionReport& r, const Plotted& what) {
  std::set<double> ticks = {1};
  Series measured{"ddp measured", kMeasuredColor, {}, false};
  for (const MeasuredScalingPoint& m : r.measured) {
    ticks.insert(static_cast<double>(m.world_size));
    const double v = what.measured(m);
    if (v >= 0) measured.points.emplace_back(static_cast<double>(m.world_size), v);
  }
  std::vector<Series> series;
  // Each link's projection starts at the measured reference point: an extension of the curve.
  const MeasuredScalingPoint* ref = reference_point(r);
  size_t link_index = 0;
  for (size_t i = 0; i < r.projected.size(); ++i) {
    const ProjectedPoint& p = r.projected[i];
    if (i == 0 || p.link_gbit_s != r.projected[i - 1].link_gbit_s) {
      Series s{fmt::format("proj. {:g} Gb/s", p.link_gbit_s),
               kLinkColors[link_index++ % std::size(kLinkColors)],
               {},
               true};
      if (ref != nullptr && what.measured(*ref) >= 0) {
        s.points.emplace_back(static_cast<double>(ref->world_size), what.measured(*ref));
      }
      series.push_back(s);
    }
    ticks.insert(static_cast<double>(p.devices));
    series.back().points.emplace_back(static_cast<double>(p.devices), what.projected(p));
  }
  // Drawn last, so that a measured point the projection starts from stays visible on top.
  series.push_back(measured);
  return line_chart({what.id, what.title, "devices (log2 scale)", what.y_label,
                     std::vector<double>(ticks.begin(), ticks.end()), true},
                    series);
}

std::string charts_section(const ProjectionReport& r) {
  const Plotted step{"chart-projection-step", "Step time: measured, projection dashed",
                     "step time (ms)", [](const MeasuredScalingPoint& m) { return 1e3 * m.step_s; },
                     [](const ProjectedPoint& p) { return 1e3 * p.step_s; }};
  const Plotted efficiency{"chart-projection-efficiency",
                           "Weak-scaling efficiency: projection dashed", "efficiency (%)",
                           [](const MeasuredScalingPoint& m) {
                             return m.scaling_efficiency < 0 ? -1.0 : 100 * m.scaling_efficiency;
                           },
                           [](const ProjectedPoint& p) { return 100 * p.scaling_efficiency; }};
  return fmt::format(
      "<section id=\"projection-charts\"><h2>Measured scaling and its projection</h2>"
      "<p class=\"note\">Solid: measured by the input run. <b>Dashed: projection</b> ({} "
      "allreduce, alpha {:g} us, {} bytes per step) from the measured point at K={}: a model, "
      "not a measurement. It keeps the measured compute and replaces the measured interconnect "
      "by each projected link, so it can lie below the measured curve.</p><div "
      "class=\"charts\">\n{}{}</div></section>\n",
      xml_escape(r.model.algo), 1e6 * r.model.alpha_s, r.basis.bytes_per_step,
      r.basis.reference_world_size, chart(r, step), chart(r, efficiency));
}

std::string validation_section(const ProjectionValidation& v) {
  std::string out = "<section id=\"validation\"><h2>Validation on the measured world sizes</h2>\n";
  if (!v.possible) {
    return out + fmt::format("<p class=\"none\">{}</p></section>\n", xml_escape(v.note));
  }
  const std::string bandwidth =
      v.fitted_beta_s_per_byte > 0
          ? fmt::format("{:.3g} Gbit/s", 8 / v.fitted_beta_s_per_byte / 1e9)
          : std::string("unbounded (no bandwidth term fitted)");
  out += fmt::format(
      "<p>{}. Measured interconnect fitted: alpha {:.1f} us, bandwidth {}, overlap fraction "
      "{:.3f}. Largest error on a held-out world size: <b>step time {:.1f}%</b>, <b>exposed "
      "communication {:.1f}%</b>.</p>\n"
      "<table><tr><th>K</th><th>measured step</th><th>predicted step</th><th>error</th>"
      "<th>measured exposed comm</th><th>predicted exposed comm</th><th>error</th></tr>\n",
      xml_escape(v.note), 1e6 * v.fitted_alpha_s, xml_escape(bandwidth), v.fitted_overlap_fraction,
      100 * v.max_abs_step_error, 100 * v.max_abs_comm_error);
  for (const HeldOutPoint& h : v.held_out) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:+.1f}%</td><td>{}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        h.world_size, html_ms(h.measured_step_s), html_ms(h.predicted_step_s), 100 * h.step_error,
        html_ms(h.measured_exposed_comm_s), html_ms(h.predicted_exposed_comm_s),
        std::isnan(h.comm_error) ? std::string("-") : fmt::format("{:+.1f}%", 100 * h.comm_error));
  }
  return out + "</table></section>\n";
}

std::string basis_section(const ProjectionReport& r) {
  const ProjectionBasis& b = r.basis;
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"input", b.source},
      {"reference point",
       fmt::format("ddp at K={} ({} over {}), {:g} samples per device", b.reference_world_size,
                   b.device, b.backend, b.per_device_batch)},
      {"measured step / compute / backward",
       html_ms(b.step_s) + " / " + html_ms(b.compute_s) + " / " + html_ms(b.backward_s)},
      {"gradient bytes per step", fmt::format("{} in {} bucket(s)", b.bytes_per_step, b.buckets)},
      {"overlap fraction", b.overlap_source},
      {"overlap window", html_ms(b.overlap_window_s)},
      {"efficiency baseline t(1)", html_ms(b.baseline_step_s) + " — " + b.baseline_source},
      {"allreduce model", r.model.algo + ": " + r.model.formula},
      {"step model", "t(n) = compute + max(0, T(n, S) - overlap window); efficiency t(1) / t(n)"},
      {"input scaling", b.scaling}};
  std::string out = "<section id=\"basis\"><h2>What the projection assumes</h2><table>\n";
  for (const auto& [k, v] : rows) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  }
  return out + "</table></section>\n";
}

std::string table_section(const ProjectionReport& r) {
  std::string out =
      "<section id=\"projected\"><h2>Projected points</h2><table><tr><th>link</th>"
      "<th>devices</th><th>allreduce</th><th>exposed comm</th><th>step time</th>"
      "<th>samples/s</th><th>efficiency</th></tr>\n";
  for (const ProjectedPoint& p : r.projected) {
    out += fmt::format(
        "<tr><td>{:g} Gbit/s</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td>"
        "<td>{:.1f}%</td></tr>\n",
        p.link_gbit_s, p.devices, html_ms(p.allreduce_s), html_ms(p.exposed_comm_s),
        html_ms(p.step_s), p.samples_per_s, 100 * p.scaling_efficiency);
  }
  return out + "</table></section>\n";
}

constexpr const char* kProjectionStyle = R"(
body{font-family:system-ui,sans-serif;margin:0 auto;padding:24px;box-sizing:border-box;color:#222;max-width:1200px}
svg.chart{max-width:100%;height:auto} .charts{display:flex;flex-wrap:wrap}
h1{margin-bottom:4px} section{margin:18px 0} .note{color:#333} .none{color:#555}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ddd;padding:3px 6px;text-align:left}
.chart{margin:6px 12px 6px 0;border:1px solid #eee} .plot{fill:#fafafa;stroke:#999}
.grid{stroke:#e0e0e0} .tick{font-size:11px;fill:#444} .axis{font-size:12px;fill:#222}
.ctitle{font-size:14px;font-weight:600} .legend{font-size:12px}
)";

}  // namespace

std::string projection_html(const ProjectionReport& r) {
  return fmt::format(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ddpbench "
             "projection: {}</title><style>{}</style></head><body>\n<h1>ddpbench projection: "
             "{}</h1><p>{} allreduce model over the measured run {} — projected values are "
             "estimates, not measurements.</p>\n",
             xml_escape(r.basis.scenario), kProjectionStyle, xml_escape(r.basis.scenario),
             xml_escape(r.model.algo), xml_escape(r.basis.source)) +
         charts_section(r) + validation_section(r.validation) + basis_section(r) +
         table_section(r) + "</body></html>\n";
}

}  // namespace ddpbench::reports
