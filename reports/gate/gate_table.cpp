// gate_table.cpp — see gate_table.h.
#include "reports/gate/gate_table.h"

#include <fmt/format.h>

#include "reports/format/escape.h"

namespace ddpbench::reports {

std::string render_gate_table(const GateResult& g, bool markdown) {
  std::string out;
  for (const std::string& note : g.notes) {
    out += markdown ? markdown_escape(note) + "\n\n" : note + "\n";
  }
  // The baseline column says what it holds: one report's samples/s, or the lookback's.
  const std::string base = g.baseline_column.empty() ? "baseline" : g.baseline_column;
  if (markdown) {
    out += fmt::format(
        "| point | {} samples/s | current samples/s | delta | verdict "
        "|\n|---|---:|---:|---:|---|\n",
        base);
  } else {
    out += fmt::format("{:<36} {:>14} {:>14} {:>8}  {}\n", "point", base + "/s", "current/s",
                       "delta", "verdict");
  }
  for (const auto& p : g.points) {
    const std::string verdict = p.detail.empty() ? p.verdict : p.verdict + ": " + p.detail;
    const std::string delta = fmt::format("{:+.1f}%", 100 * p.delta);
    out += markdown
               ? fmt::format("| {} | {:.1f} | {:.1f} | {} | {} |\n", markdown_escape(p.key),
                             p.baseline_samples_per_s, p.current_samples_per_s, delta,
                             markdown_escape(verdict))
               : fmt::format("{:<36} {:>14.1f} {:>14.1f} {:>8}  {}\n", p.key,
                             p.baseline_samples_per_s, p.current_samples_per_s, delta, verdict);
  }
  return out + (g.passed ? "\ngate: PASS\n" : "\ngate: FAIL\n");
}

}  // namespace ddpbench::reports
