// console_reporter.cpp — see console_reporter.h. A fixed-width table, one row per mode.
#include "reports/run/console_reporter.h"

#include <fmt/format.h>

#include "reports/run/divergence_text.h"
#include "reports/run/memory_rows.h"
#include "reports/run/verdict.h"

namespace ddpbench::reports {

namespace {

// One row per mode: its losses, step times, throughput and scaling.
std::string results_table(const RunReport& report) {
  // The median step (what samples/s divides by), the mean and the CV beside it, as
  // google/benchmark shows median, mean and CV; a row whose figures are weak ends in "weak".
  std::string out = fmt::format(
      "{:<6} {:>5} {:>6} {:>12} {:>12} {:>10} {:>10} {:>6} {:>11} {:>8}\n", "mode", "world",
      "steps", "first loss", "last loss", "p50 step", "mean step", "cv", "samples/s", "scaling");
  for (const ModeResult& r : report.results) {
    const ThroughputRecord& t = r.throughput;
    const std::string eff = describe_efficiency(r);
    // "-" where a value does not apply: no checked steps (perf only), no timed steps (check only).
    const bool timed = t.timed_steps > 0;
    const bool checked = !r.losses.empty();
    const std::string rate = timed ? fmt::format("{:.1f}", t.samples_per_s) : "-";
    const std::string p50 = timed ? fmt::format("{:.4f}s", t.step_time_p50_s) : "-";
    const std::string mean = timed ? fmt::format("{:.4f}s", t.step_time_mean_s) : "-";
    const std::string cv = timed ? fmt::format("{:.2f}", t.step_time_cv) : "-";
    const std::string steps = checked ? std::to_string(r.losses.size()) : "-";
    const std::string first = checked ? fmt::format("{:.8g}", r.losses.front()) : "-";
    const std::string last = checked ? fmt::format("{:.8g}", r.losses.back()) : "-";
    out += fmt::format("{:<6} {:>5} {:>6} {:>12} {:>12} {:>10} {:>10} {:>6} {:>11} {:>8}{}\n",
                       name_of(r.mode), r.world_size, steps, first, last, p50, mean, cv, rate, eff,
                       t.weak_reasons.empty() ? "" : " weak");
  }
  return out;
}

// The notes under the table: weak timing figures, stragglers, evaluation passes, mixed precision
// figures.
std::string result_notes(const RunReport& report) {
  std::string out;
  bool weak_header = false;
  for (const ModeResult& r : report.results) {
    if (r.throughput.weak_reasons.empty()) continue;
    if (!weak_header) out += "\nweak timing figures (reports/METRICS.md, \"Weak figures\"):\n";
    weak_header = true;
    for (const std::string& why : r.throughput.weak_reasons) {
      out += fmt::format("  {} (world {}): {}\n", name_of(r.mode), r.world_size, why);
    }
  }
  bool rank_header = false;
  for (const ModeResult& r : report.results) {
    if (r.throughput.straggler.summary.empty()) continue;
    if (!rank_header) out += "\nranks (reports/METRICS.md, \"Hangs, desyncs and stragglers\"):\n";
    rank_header = true;
    out += fmt::format("  {} (world {}): {}\n", name_of(r.mode), r.world_size,
                       r.throughput.straggler.summary);
  }
  bool eval_header = false;
  for (const ModeResult& r : report.results) {
    const std::string e = describe_evaluation(r.evaluation);
    if (e.empty()) continue;
    if (!eval_header) out += "\nevaluation pass:\n";
    eval_header = true;
    out += fmt::format("  {:<6} {}\n", name_of(r.mode), e);
  }
  bool amp_header = false;
  for (const ModeResult& r : report.results) {
    if (r.amp_vs_float32.summary.empty()) continue;
    if (!amp_header) out += "\nmixed precision against float32 (a figure, not a check):\n";
    amp_header = true;
    out += fmt::format("  {:<6} {}\n", name_of(r.mode), r.amp_vs_float32.summary);
  }
  return out;
}

// Memory per rank after the last step, where the modes measured it.
std::string memory_table(const RunReport& report) {
  std::string out;
  const std::vector<MemoryRow> memory = memory_rows(report);
  if (!memory.empty()) {
    out += "\nmemory per rank after the last step (MiB; measured from the live tensors):\n";
    out += fmt::format("  {:<6} {:>3} {:>5} {:>11} {:>10} {:>16} {:>9}\n", "mode", "K", "rank",
                       "parameters", "gradients", "optimizer state", "peak RSS");
    for (const MemoryRow& m : memory) {
      const std::string vs =
          m.optimizer_state_vs_ddp < 0
              ? ""
              : fmt::format("  ({:.3f} x ddp's / {})", m.optimizer_state_vs_ddp, m.shards);
      out += fmt::format("  {:<6} {:>3} {:>5} {:>11.3f} {:>10.3f} {:>16.3f} {:>9.1f}{}\n", m.mode,
                         m.world_size, m.rank, m.parameter_mib, m.gradient_mib,
                         m.optimizer_state_mib, m.peak_rss_mib, vs);
    }
  }
  return out;
}

// Each judged mode's checks against its reference; `failed` counts the failing ones.
std::string check_tables(const RunReport& report, int& failed) {
  std::string out;
  for (const ModeResult& r : report.results) {
    if (r.checks.empty()) continue;
    const ReferenceRecord& ref = r.reference;
    out += fmt::format("\n{} (world {}) vs {}{}:\n", name_of(r.mode), r.world_size,
                       describe_reference(ref),
                       r.gradient_check.empty() ? "" : ", gradients compared " + r.gradient_check);
    if (!ref.summary.empty()) out += fmt::format("  {}\n", ref.summary);
    if (!ref.floor.empty()) out += fmt::format("  rounding floor measured: {}\n", ref.floor);
    out += fmt::format("  {:<20} {:<20} {:>12} {:>12}  {}\n", "check", "status", "max abs diff",
                       "max rel diff", "worst tensor (step)");
    for (const CheckRecord& c : r.checks) {
      const bool fail = c.status == CheckStatus::kFail;
      if (fail) ++failed;
      const std::string where =
          c.tensor.empty()
              ? "-"
              : (c.step >= 0 ? fmt::format("{} (step {})", c.tensor, c.step) : c.tensor);
      out += fmt::format("  {:<20} {:<20} {:>12.3e} {:>12.3e}  {}\n", name_of(c.name),
                         fail ? "FAIL" : name_of(c.status), c.max_abs_diff, c.max_rel_diff, where);
      if (c.status != CheckStatus::kPass || c.floored > 0 || c.incomparable > 0) {
        out += fmt::format("  {:<20} {}\n", "", describe_counts(c));
        if (!c.detail.empty()) out += fmt::format("  {:<20} {}\n", "", c.detail);
        if (c.status == CheckStatus::kRounding) {
          out += fmt::format(
              "  {:<20} float32 rounding: the float64 re-run (--bisect) passes every check\n", "");
        }
      }
    }
    if (r.first_divergence.stage != Stage::kNone) {
      out += fmt::format("  first divergence: {}\n", describe_first_divergence(r.first_divergence));
    }
  }
  return out;
}

// The report's own verdict, the one every other format shows (verdict_text), with the count of
// failing checks.
std::string verdict_line(const RunReport& report, int failed) {
  if (report.verdict == Verdict::kFail) {
    return failed > 0 ? fmt::format("\nFAIL: {} check(s) failed\n", failed)
                      : "\nFAIL: a judged mode's loss is not finite or it diverged\n";
  }
  return "\n" + verdict_text(report) + "\n";
}

}  // namespace

std::string ConsoleReporter::render(const RunReport& report) const {
  int failed = 0;
  std::string out = results_table(report) + result_notes(report) + memory_table(report);
  out += check_tables(report, failed);
  return out + verdict_line(report, failed);
}

}  // namespace ddpbench::reports
