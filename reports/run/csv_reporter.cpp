// csv_reporter.cpp — see csv_reporter.h. Numbers use "%.9g": round-trippable, locale-free.
#include "reports/run/csv_reporter.h"

#include <fmt/format.h>

#include <cmath>

#include "reports/format/escape.h"

namespace ddpbench::reports {

std::string CsvReporter::render(const RunReport& report) const {
  const RunConfig& c = report.config;
  std::string out =
      "scenario,mode,world_size,backend,dtype,amp,global_batch,samples_per_s,"
      "samples_per_s_per_device,step_time_p50_s,step_time_p90_s,step_time_p99_s,"
      "scaling_efficiency,checks_passed,checks_failed,checks_expected_divergence,"
      "step_time_mean_s,step_time_cv,weak_reasons\n";
  for (const ModeResult& r : report.results) {
    int passed = 0, failed = 0, divergent = 0;
    for (const CheckRecord& k : r.checks) {
      // A check that is float32 rounding passes (Note [Bisect's answer counts]).
      if (k.status == CheckStatus::kPass || k.status == CheckStatus::kRounding) ++passed;
      if (k.status == CheckStatus::kFail) ++failed;
      if (k.status == CheckStatus::kExpectedDivergence) ++divergent;
    }
    const ThroughputRecord& t = r.throughput;
    // A scale sweep's points differ in global batch: prefer the point's own (the samples its
    // steps processed, the batch unless the dataset is smaller than it).
    const int64_t global_batch = r.mode != Mode::kSingle && t.samples_per_step > 0
                                     ? static_cast<int64_t>(std::llround(t.samples_per_step))
                                     : c.global_batch;
    std::string weak;  // "" when the figures are sound
    for (const std::string& why : t.weak_reasons) weak += (weak.empty() ? "" : "; ") + why;
    out += fmt::format(
        "{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{},{:.9g},{:.9g},{}\n",
        csv_field(c.scenario), csv_field(name_str(r.mode)), r.world_size,
        csv_field(r.backend.empty() ? "none" : r.backend), csv_field(c.dtype), csv_field(c.amp),
        global_batch, t.samples_per_s, t.samples_per_s_per_device, t.step_time_p50_s,
        t.step_time_p90_s, t.step_time_p99_s,
        r.scaling_efficiency < 0 ? std::string() : fmt::format("{:.9g}", r.scaling_efficiency),
        passed, failed, divergent, t.step_time_mean_s, t.step_time_cv, csv_field(weak));
  }
  return out;
}

}  // namespace ddpbench::reports
