// markdown_reporter.cpp — see markdown_reporter.h.
#include "reports/markdown_reporter.h"

#include <fmt/format.h>

#include "reports/divergence_text.h"

namespace ddpbench::reports {

std::string MarkdownReporter::render(const RunReport& report) const {
  const RunConfig& c = report.config;
  std::string out =
      fmt::format("## ddpbench: {} — {}\n\n", c.scenario, report.passed ? "PASS" : "FAIL");
  out += fmt::format("{} · {} · global batch {} · {} · git {}\n\n", c.model, c.dtype,
                     c.global_batch, report.context.host, report.context.git_revision);
  out += "| mode | world | samples/s | p50 step (s) | scaling | checks |\n";
  out += "|---|---:|---:|---:|---:|---|\n";
  for (const auto& r : report.results) {
    std::string checks;
    for (const auto& k : r.checks) {
      const char* mark = k.status == "pass" ? "✅" : k.status == "fail" ? "❌" : "⚠️";
      checks += fmt::format("{}{} {}", checks.empty() ? "" : " ", mark, k.name);
    }
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} |\n", r.mode, r.world_size,
        r.throughput.timed_steps
            ? fmt::format("{:.1f}{}", r.throughput.samples_per_s,
                          r.throughput.weak_reasons.empty() ? "" : " ⚠️ weak")
            : "-",
        r.throughput.timed_steps ? fmt::format("{:.4f}", r.throughput.step_time_p50_s) : "-",
        describe_efficiency(r), checks.empty() ? "-" : checks);
  }
  for (const auto& r : report.results) {
    for (const auto& k : r.checks) {
      if (k.status == "pass") continue;
      out += fmt::format("\n- **{} {}** {}: max abs diff {:.3e} at {}{} — {}", r.mode, k.name,
                         k.status == "fail" ? "FAILED" : "expected divergence", k.max_abs_diff,
                         k.tensor.empty() ? "-" : k.tensor,
                         k.step >= 0 ? fmt::format(" (step {})", k.step) : "", k.detail);
    }
    for (const auto& why : r.throughput.weak_reasons) {
      out += fmt::format("\n- **{} (world {}) weak timing**: {}", r.mode, r.world_size, why);
    }
    if (!r.reference.summary.empty()) {
      out += fmt::format("\n- **{}** vs {}: {}", r.mode, describe_reference(r.reference),
                         r.reference.summary);
    }
    if (const std::string e = describe_evaluation(r.evaluation); !e.empty()) {
      out += fmt::format("\n- **{} evaluation** {}", r.mode, e);
    }
    if (!r.first_divergence.stage.empty()) {
      out += fmt::format("\n- **{} first divergence**: {}", r.mode,
                         describe_first_divergence(r.first_divergence));
    }
  }
  return out + "\n";
}

}  // namespace ddpbench::reports
