// csv_reporter.h — report.csv: one row per (scenario, mode, world_size), with a header row.
#pragma once

#include "reports/reporter.h"

namespace ddpbench::reports {

// One CSV field, RFC 4180: quoted when it holds separators, quotes or line breaks (a bare CR ends
// a row for many readers as LF does).
std::string csv_field(const std::string& s);

class CsvReporter : public Reporter {
 public:
  std::string name() const override { return "csv"; }
  std::string file_name() const override { return "report.csv"; }
  std::string render(const RunReport& report) const override;
};

}  // namespace ddpbench::reports
