// console_reporter.cpp — see console_reporter.h. A fixed-width table, one row per mode.
#include "reports/console_reporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace ddpbench::reports {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string ConsoleReporter::render(const RunReport& report) const {
  const RunConfig& c = report.config;
  std::string out = fmt::format("{:<8} {:>5} {:>6} {:>14} {:>14} {:>13} {:>12}\n", "mode", "world",
                                "steps", "first loss", "last loss", "p50 step (s)", "samples/s");
  for (const ModeResult& r : report.results) {
    const double p50 = median(r.step_seconds);
    const double rate = p50 > 0 ? static_cast<double>(c.global_batch) / p50 : 0.0;
    out += fmt::format("{:<8} {:>5} {:>6} {:>14.8g} {:>14.8g} {:>13.4f} {:>12.1f}\n", r.mode,
                       r.world_size, r.losses.size(), r.losses.empty() ? 0.0 : r.losses.front(),
                       r.losses.empty() ? 0.0 : r.losses.back(), p50, rate);
  }
  int failed = 0;
  for (const ModeResult& r : report.results) {
    if (r.checks.empty()) continue;
    out += fmt::format("\n{} (world {}) vs single{}:\n", r.mode, r.world_size,
                       r.gradient_check.empty() ? "" : ", gradients compared " + r.gradient_check);
    out += fmt::format("  {:<20} {:<20} {:>12} {:>12}  {}\n", "check", "status", "max abs diff",
                       "max rel diff", "worst tensor (step)");
    for (const CheckRecord& c : r.checks) {
      if (c.status == "fail") ++failed;
      const std::string where =
          c.tensor.empty()
              ? "-"
              : (c.step >= 0 ? fmt::format("{} (step {})", c.tensor, c.step) : c.tensor);
      out += fmt::format("  {:<20} {:<20} {:>12.3e} {:>12.3e}  {}\n", c.name,
                         c.status == "fail" ? "FAIL" : c.status, c.max_abs_diff, c.max_rel_diff,
                         where);
      if (c.status != "pass") out += fmt::format("  {:<20} {}\n", "", c.detail);
    }
  }
  out += failed == 0 ? "\nPASS\n" : fmt::format("\nFAIL: {} check(s) failed\n", failed);
  return out;
}

}  // namespace ddpbench::reports
