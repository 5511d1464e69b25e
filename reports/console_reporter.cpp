// console_reporter.cpp — see console_reporter.h. A fixed-width table, one row per mode.
#include "reports/console_reporter.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

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
  return out;
}

}  // namespace ddpbench::reports
