// csv_reporter.h — report.csv: one row per (scenario, mode, world_size), with a header row.
#pragma once

#include "reports/run/reporter.h"

namespace ddpbench::reports {

class CsvReporter : public Reporter {
 public:
  std::string name() const override { return "csv"; }
  std::string file_name() const override { return "report.csv"; }
  std::string render(const RunReport& report) const override;
};

}  // namespace ddpbench::reports
