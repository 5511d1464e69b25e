// markdown_reporter.cpp — see markdown_reporter.h. Every string taken from the report goes through
// markdown_escape (md below): report.md lands on CI summary pages, where a host or tensor name
// must not become a heading, a code fence, a table cell or a tag.
#include "reports/run/markdown_reporter.h"

#include <fmt/format.h>

#include "reports/run/divergence_text.h"
#include "reports/format/escape.h"
#include "reports/run/verdict.h"

namespace ddpbench::reports {
namespace {

std::string md(std::string_view value) { return markdown_escape(value); }

}  // namespace

std::string MarkdownReporter::render(const RunReport& report) const {
  const RunConfig& c = report.config;
  std::string out =
      fmt::format("## ddpbench: {} — {}\n\n", md(c.scenario), md(verdict_text(report)));
  out += fmt::format("{} · {} · global batch {} · {} · git {}\n\n", md(c.model),
                     md(describe_precision(c)), c.global_batch, md(report.context.host),
                     md(report.context.git_revision));
  if (!c.model_file.empty()) {
    out += fmt::format("model file {}: {}\n\n", md(c.model_file), md(c.model_notes));
  }
  out += "| mode | world | samples/s | p50 step (s) | scaling | checks |\n";
  out += "|---|---:|---:|---:|---:|---|\n";
  for (const auto& r : report.results) {
    std::string checks;
    for (const auto& k : r.checks) {
      const char* mark = k.status == CheckStatus::kPass   ? "✅"
                         : k.status == CheckStatus::kFail ? "❌"
                                                          : "⚠️";
      checks += fmt::format("{}{} {}", checks.empty() ? "" : " ", mark, md(name_of(k.name)));
    }
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} |\n", md(name_of(r.mode)), r.world_size,
        r.throughput.timed_steps
            ? fmt::format("{:.1f}{}", r.throughput.samples_per_s,
                          r.throughput.weak_reasons.empty() ? "" : " ⚠️ weak")
            : "-",
        r.throughput.timed_steps ? fmt::format("{:.4f}", r.throughput.step_time_p50_s) : "-",
        md(describe_efficiency(r)), checks.empty() ? "-" : checks);
  }
  for (const auto& r : report.results) {
    for (const auto& k : r.checks) {
      if (k.status == CheckStatus::kPass) continue;
      out += fmt::format("\n- **{} {}** {}: max abs diff {:.3e} at {}{} — {}{}",
                         md(name_of(r.mode)), md(name_of(k.name)),
                         k.status == CheckStatus::kFail ? "FAILED" : "expected divergence",
                         k.max_abs_diff, k.tensor.empty() ? "-" : md(k.tensor),
                         k.step >= 0 ? fmt::format(" (step {})", k.step) : "",
                         md(describe_counts(k)), k.detail.empty() ? "" : "; " + md(k.detail));
    }
    for (const auto& why : r.throughput.weak_reasons) {
      out += fmt::format("\n- **{} (world {}) weak timing**: {}", md(name_of(r.mode)), r.world_size,
                         md(why));
    }
    if (!r.reference.summary.empty()) {
      out += fmt::format("\n- **{}** vs {}: {}", md(name_of(r.mode)),
                         md(describe_reference(r.reference)), md(r.reference.summary));
    }
    if (!r.reference.floor.empty()) {
      out += fmt::format("\n- **{} rounding floor** measured: {}", md(name_of(r.mode)),
                         md(r.reference.floor));
    }
    if (const std::string e = describe_evaluation(r.evaluation); !e.empty()) {
      out += fmt::format("\n- **{} evaluation** {}", md(name_of(r.mode)), md(e));
    }
    if (!r.amp_vs_float32.summary.empty()) {
      out += fmt::format("\n- **{} mixed precision**: {}", md(name_of(r.mode)),
                         md(r.amp_vs_float32.summary));
    }
    if (r.first_divergence.stage != Stage::kNone) {
      out += fmt::format("\n- **{} first divergence**: {}", md(name_of(r.mode)),
                         md(describe_first_divergence(r.first_divergence)));
    }
  }
  return out + "\n";
}

}  // namespace ddpbench::reports
