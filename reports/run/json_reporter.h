// json_reporter.h — the canonical report.json (json_report_reader.h reads it back, so any other
// format can be regenerated from a JSON file). Field names are documented in reports/SCHEMA.md.
#pragma once

#include <nlohmann/json.hpp>

#include "reports/run/reporter.h"

namespace ddpbench::reports {

class JsonReporter : public Reporter {
 public:
  std::string name() const override { return "json"; }
  std::string file_name() const override { return "report.json"; }
  std::string render(const RunReport& report) const override;
};

nlohmann::json to_json(const RunReport& report);

}  // namespace ddpbench::reports
