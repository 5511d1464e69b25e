// junit_reporter.cpp — see junit_reporter.h.
#include "reports/run/junit_reporter.h"

#include <fmt/format.h>

#include "reports/format/escape.h"
#include "reports/run/divergence_text.h"
#include "reports/run/verdict.h"

namespace ddpbench::reports {

namespace {

// The perf point as a testcase: CI dashboards chart its time (the mean step) and show its
// figures.
std::string throughput_testcase(const ModeResult& r, const std::string& suite) {
  const ThroughputRecord& t = r.throughput;
  return fmt::format(
      "    <testcase classname=\"{}\" name=\"throughput\" time=\"{:.6f}\">\n      "
      "<system-out>{:.1f} samples/s ({:.1f} per device), step p50 {:.4f}s p90 {:.4f}s p99 "
      "{:.4f}s over {} timed steps after {} warm-up, scaling efficiency {}</system-out>\n"
      "    </testcase>\n",
      xml_escape(suite),
      t.samples_per_step > 0 && t.samples_per_s > 0 ? t.samples_per_step / t.samples_per_s : 0.0,
      t.samples_per_s, t.samples_per_s_per_device, t.step_time_p50_s, t.step_time_p90_s,
      t.step_time_p99_s, t.timed_steps, t.warmup_steps, describe_efficiency(r));
}

// One check as a testcase: a failure with its diff summary and first divergence, rounding and
// expected divergences passing with their reason, a check with nothing comparable skipped.
std::string check_testcase(const ModeResult& r, const CheckRecord& k, const std::string& suite) {
  const std::string summary =
      fmt::format("max abs diff {:.3e}, max rel diff {:.3e}, worst tensor {}{}: {}", k.max_abs_diff,
                  k.max_rel_diff, k.tensor.empty() ? "-" : k.tensor,
                  k.step >= 0 ? fmt::format(" (step {})", k.step) : "",
                  describe_counts(k) + (k.detail.empty() ? "" : "; " + k.detail));
  std::string out =
      fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(suite), name_of(k.name));
  if (k.status == CheckStatus::kFail) {
    const std::string first = describe_first_divergence(r.first_divergence);
    return out +
           fmt::format(
               ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
               xml_escape(name_str(k.name) + " differs from " + describe_reference(r.reference)),
               xml_escape(summary + (first.empty() ? "" : "\nfirst divergence: " + first)));
  }
  if (k.status == CheckStatus::kRounding) {
    return out + fmt::format(
                     ">\n      <system-out>float32 rounding (the float64 re-run passes every "
                     "check): {}</system-out>\n    </testcase>\n",
                     xml_escape(summary));
  }
  if (k.status == CheckStatus::kNotComparable) {
    return out + fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                             xml_escape(summary));
  }
  if (k.status == CheckStatus::kExpectedDivergence) {
    return out + fmt::format(
                     ">\n      <system-out>expected divergence: {}</system-out>\n    "
                     "</testcase>\n",
                     xml_escape(summary));
  }
  return out + "/>\n";
}

}  // namespace

std::string JunitReporter::render(const RunReport& report) const {
  const RunConfig& c = report.config;
  int tests = 0, failures = 0;
  for (const auto& r : report.results) {
    tests += r.throughput.timed_steps > 0 ? 1 : 0;       // the measured point
    tests += describe_scope(report, r).empty() ? 0 : 1;  // the `scope` testcase below
    for (const auto& k : r.checks) {
      ++tests;
      failures += k.status == CheckStatus::kFail ? 1 : 0;
    }
  }
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ddpbench\" tests=\"{}\" "
      "failures=\"{}\">\n",
      tests, failures);
  for (const auto& r : report.results) {
    const bool measured = r.throughput.timed_steps > 0;
    if (r.checks.empty() && !measured) continue;
    int suite_failures = 0;
    for (const auto& k : r.checks) suite_failures += k.status == CheckStatus::kFail ? 1 : 0;
    const std::string suite =
        fmt::format("{}.{}.world{}", c.scenario, name_of(r.mode), r.world_size);
    // A mode judged for consistency only, or not at every step, says so as a skipped testcase
    // a dashboard shows beside its passing checks (Note [What a mode was judged against]).
    const std::string scope = describe_scope(report, r);
    out +=
        fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n", xml_escape(suite),
                    r.checks.size() + (measured ? 1 : 0) + (scope.empty() ? 0 : 1), suite_failures);
    if (!scope.empty()) {
      out += fmt::format(
          "    <testcase classname=\"{}\" name=\"scope\">\n      <skipped message=\"{}\"/>\n"
          "    </testcase>\n",
          xml_escape(suite), xml_escape(scope));
    }
    if (measured) out += throughput_testcase(r, suite);
    for (const auto& k : r.checks) out += check_testcase(r, k, suite);
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace ddpbench::reports
