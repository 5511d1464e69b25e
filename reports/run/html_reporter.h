// html_reporter.h — report.html: one self-contained page that opens offline: the verdict up top
// (pass / fail per mode with the worst tensor), throughput and scaling efficiency against world
// size with the ideal lines, per-phase stacked bars, overlaid loss curves, the run's sampler
// partition with padding highlighted, every check, and the environment.
#pragma once

#include "reports/run/reporter.h"

namespace ddpbench::reports {

class HtmlReporter : public Reporter {
 public:
  std::string name() const override { return "html"; }
  std::string file_name() const override { return "report.html"; }
  std::string render(const RunReport& report) const override;
};

}  // namespace ddpbench::reports
