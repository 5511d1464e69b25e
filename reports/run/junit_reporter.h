// junit_reporter.h — report.junit.xml: one testcase per check, as CI systems read JUnit XML
// (a testsuite per mode; failures carry the diff summary; expected divergences pass with the
// reason in system-out).
#pragma once

#include "reports/run/reporter.h"

namespace ddpbench::reports {

class JunitReporter : public Reporter {
 public:
  std::string name() const override { return "junit"; }
  std::string file_name() const override { return "report.junit.xml"; }
  std::string render(const RunReport& report) const override;
};

}  // namespace ddpbench::reports
