// html_figures.cpp — see html_figures.h.
#include "reports/run/html_figures.h"
#include "reports/format/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "reports/run/divergence_text.h"  // describe_efficiency
#include "reports/run/junit_reporter.h"  // xml_escape
#include "reports/run/memory_rows.h"
#include "reports/format/svg_chart.h"

namespace ddpbench::reports {
namespace {

const char* color_of(Mode mode) { return mode_spec(mode).colour.data(); }

// The timed figures in numbers, the median step beside the mean and the CV, and a "weak" badge
// with its reasons where a figure rests on too little (metrics Note [Weak figures]): the charts
// below plot every point, weak or not.
std::string throughput_table(const RunReport& r) {
  std::string rows;
  for (const auto& m : r.results) {
    const ThroughputRecord& t = m.throughput;
    if (t.timed_steps == 0) continue;
    std::string flag;
    for (const auto& why : t.weak_reasons) {
      flag += fmt::format("{}{}", flag.empty() ? "" : "<br>", xml_escape(why));
    }
    if (!flag.empty()) flag = "<span class=\"badge weak\">weak</span> " + flag;
    rows += fmt::format(
        "<tr{}><td>{} K={}</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}</td>"
        "<td class=\"num\">{:.3f}</td><td class=\"num\">{:.3f}</td><td class=\"num\">{:.2f}</td>"
        "<td class=\"num\">{}</td><td>{}</td></tr>\n",
        flag.empty() ? "" : " class=\"weak\"", name_of(m.mode), m.world_size, t.timed_steps,
        t.samples_per_s, 1e3 * t.step_time_p50_s, 1e3 * t.step_time_mean_s, t.step_time_cv,
        xml_escape(describe_efficiency(m)), flag.empty() ? "-" : flag);
  }
  if (rows.empty()) return "";
  return "<div class=\"wide\"><table id=\"throughput\"><tr><th>mode</th><th>timed steps</th>"
         "<th>samples/s (median step)</th><th>p50 step (ms)</th><th>mean step (ms)</th>"
         "<th>CV</th><th>scaling</th><th>statistics</th></tr>\n" +
         rows + "</table></div>\n";
}

// A run without timed steps (--check-only) has no figures to chart: said in words, as the loss
// section says a run without checked steps, rather than empty axes.
bool any_timed(const RunReport& r) {
  for (const auto& m : r.results) {
    if (m.throughput.timed_steps > 0) return true;
  }
  return false;
}

constexpr const char* kNoTimedSteps =
    "<p class=\"none\">No timed steps: this run only checked correctness (--check-only), so "
    "there is no throughput, scaling or phase time to chart.</p>";

// A sweep (`scale`) with per-rank memory at several world sizes: each mode's largest rank
// (parameters + gradients + optimizer state) against K, the curve sharding exists to bend.
std::string memory_chart(const std::vector<MemoryRow>& rows) {
  std::map<std::string, std::map<int64_t, double>> largest;  // mode -> K -> MiB
  std::set<double> sizes;
  for (const MemoryRow& m : rows) {
    double& y = largest[m.mode][m.world_size];
    y = std::max(y, m.parameter_mib + m.gradient_mib + m.optimizer_state_mib);
    sizes.insert(static_cast<double>(m.world_size));
  }
  if (sizes.size() < 2) return "";
  std::vector<Series> series;
  for (const auto& [mode, points] : largest) {
    Series s{mode, color_of(parse_name<Mode>(mode).value_or(Mode::kDdp)), {}};
    for (const auto& [k, mib] : points) s.points.emplace_back(static_cast<double>(k), mib);
    series.push_back(std::move(s));
  }
  return "<div class=\"charts\">\n" +
         line_chart({"chart-memory", "Parameters + gradients + optimizer state per rank",
                     "world size K (ranks)", "MiB (largest rank)",
                     std::vector<double>(sizes.begin(), sizes.end()), true},
                    series) +
         "</div>\n";
}

}  // namespace

namespace html {

std::string scaling_section(const RunReport& r) {
  if (!any_timed(r)) {
    return std::string("<section><h2>Throughput and scaling</h2>") + kNoTimedSteps + "</section>\n";
  }
  std::map<std::string, Series> rate, eff;
  double single_rate = 0;
  int64_t max_k = 1;
  for (const auto& m : r.results) {
    max_k = std::max(max_k, m.world_size);
    if (m.throughput.timed_steps == 0) continue;
    if (m.mode == Mode::kSingle) {
      single_rate = m.throughput.samples_per_s;
      continue;
    }
    auto& s = rate[name_str(m.mode)];
    s.name = name_str(m.mode);
    s.color = color_of(m.mode);
    s.points.emplace_back(m.world_size, m.throughput.samples_per_s);
    if (m.scaling_efficiency >= 0) {
      auto& e = eff[name_str(m.mode)];
      e.name = name_str(m.mode);
      e.color = color_of(m.mode);
      e.points.emplace_back(m.world_size, 100 * m.scaling_efficiency);
    }
  }
  // Ticks at the world sizes measured (and 1, where the ideal lines start), log2-spaced.
  std::set<double> measured = {1};
  for (const auto& m : r.results) {
    if (m.throughput.timed_steps > 0) measured.insert(static_cast<double>(m.world_size));
  }
  const std::vector<double> k_ticks(measured.begin(), measured.end());
  std::vector<Series> rates, effs;
  for (auto& [k, s] : rate) rates.push_back(s);
  for (auto& [k, s] : eff) effs.push_back(s);
  if (single_rate > 0) {
    rates.push_back({"ideal (K x single)",
                     "#2ca02c",
                     {{1, single_rate}, {double(max_k), max_k * single_rate}},
                     true});
    effs.push_back({"ideal (100%)", "#2ca02c", {{1, 100}, {double(max_k), 100}}, true});
  }
  return "<section><h2>Throughput and scaling</h2>" + throughput_table(r) +
         "<div class=\"charts\">\n" +
         line_chart({"chart-throughput", "Throughput vs world size", "world size K (ranks)",
                     "samples / s", k_ticks, true},
                    rates) +
         line_chart({"chart-efficiency", "Scaling efficiency vs world size", "world size K (ranks)",
                     "efficiency (%)", k_ticks, true},
                    effs) +
         "</div></section>\n";
}

std::string phases_section(const RunReport& r) {
  if (!any_timed(r)) {
    return std::string("<section><h2>Where a step's time goes</h2>") + kNoTimedSteps +
           "</section>\n";
  }
  std::vector<Bar> bars;
  for (const auto& m : r.results) {
    if (m.throughput.timed_steps == 0) continue;
    const PhaseRecord& p = m.throughput.phases;
    bars.push_back(
        {fmt::format("{} K={}", name_of(m.mode), m.world_size),
         {1e3 * p.data, 1e3 * p.forward, 1e3 * p.backward, 1e3 * p.comm_wait, 1e3 * p.optimizer}});
  }
  return "<section><h2>Where a step's time goes</h2>\n" +
         stacked_bar_chart({"chart-phases", "Mean time per step by phase", "mode and world size",
                            "milliseconds per step"},
                           {"data", "forward", "backward", "comm wait", "optimizer"},
                           {"#9467bd", "#1f77b4", "#ff7f0e", "#d62728", "#2ca02c"}, bars) +
         "</section>\n";
}

std::string loss_section(const RunReport& r) {
  std::vector<Series> curves;
  for (const auto& m : r.results) {
    if (m.losses.empty()) continue;
    Series s{fmt::format("{} K={}", name_of(m.mode), m.world_size),
             color_of(m.mode),
             {},
             m.mode == Mode::kSingle};
    for (size_t i = 0; i < m.losses.size(); ++i) s.points.emplace_back(double(i), m.losses[i]);
    curves.push_back(s);
  }
  if (curves.empty()) {
    return "<section><h2>Loss per step</h2><p class=\"none\">No checked steps: this run only "
           "measured throughput (--perf-only, or `ddpbench scale`).</p></section>\n";
  }
  // Steps are whole numbers: a short run gets a tick at every step, not at 0.5.
  std::vector<double> step_ticks;
  size_t steps = 0;
  for (const auto& c : curves) steps = std::max(steps, c.points.size());
  if (steps <= 10) {
    for (size_t i = 0; i < steps; ++i) step_ticks.push_back(double(i));
  }
  return "<section><h2>Loss per step</h2>\n" +
         line_chart({"chart-loss", "Training loss (global mean) per checked step", "step", "loss",
                     step_ticks},
                    curves) +
         "</section>\n";
}

// Per rank of ddp and zero: what each held after the last step (reports/run/memory_rows.h).
std::string memory_section(const RunReport& r) {
  const std::vector<MemoryRow> rows = memory_rows(r);
  if (rows.empty()) return "";
  std::set<int64_t> sizes;
  for (const MemoryRow& m : rows) sizes.insert(m.world_size);
  const bool sweep = sizes.size() > 1;  // a K column tells the points apart
  std::string out =
      "<section id=\"memory\"><h2>Memory per rank</h2><p>After the last step, measured from "
      "each rank's live tensors (MiB), and the rank process's peak RSS. Under HSDP zero's state is "
      "split over a shard group: K there is its size S.</p><table><tr><th>mode"
      "</th>" +
      std::string(sweep ? "<th>K</th>" : "") +
      "<th>rank</th><th>parameters</th><th>gradients</th><th>optimizer state</th><th>"
      "optimizer state vs ddp's / K</th><th>peak RSS</th></tr>\n";
  for (const MemoryRow& m : rows) {
    out += fmt::format(
        "<tr><td>{}</td>{}<td class=\"num\">{}</td><td class=\"num\">{:.3f}</td><td "
        "class=\"num\">{:.3f}</td><td class=\"num\">{:.3f}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{:.1f}</td></tr>\n",
        xml_escape(m.mode),
        sweep ? fmt::format("<td class=\"num\">{}</td>", m.world_size) : std::string(), m.rank,
        m.parameter_mib, m.gradient_mib, m.optimizer_state_mib,
        m.optimizer_state_vs_ddp < 0 ? "-" : fmt::format("{:.3f}", m.optimizer_state_vs_ddp),
        m.peak_rss_mib);
  }
  return out + "</table>\n" + memory_chart(rows) + "</section>\n";
}

}  // namespace html
}  // namespace ddpbench::reports
