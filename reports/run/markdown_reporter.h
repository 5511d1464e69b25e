// markdown_reporter.h — report.md: a short summary for a CI job summary page.
#pragma once

#include "reports/run/reporter.h"

namespace ddpbench::reports {

class MarkdownReporter : public Reporter {
 public:
  std::string name() const override { return "markdown"; }
  std::string file_name() const override { return "report.md"; }
  std::string render(const RunReport& report) const override;
};

}  // namespace ddpbench::reports
