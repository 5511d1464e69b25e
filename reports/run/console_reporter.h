// console_reporter.h — the human summary printed at the end of `ddpbench run`.
#pragma once

#include "reports/run/reporter.h"

namespace ddpbench::reports {

class ConsoleReporter : public Reporter {
 public:
  std::string name() const override { return "console"; }
  std::string file_name() const override { return ""; }
  std::string render(const RunReport& report) const override;
};

}  // namespace ddpbench::reports
