// report_file.h — reads a report.json from disk for `report` and `gate`, with errors that name
// the file.
#pragma once

#include <string>

#include "reports/run_record.h"

namespace ddpbench::output {

// A report file as read once: its bytes (what `report` copies) and what they say.
struct ReportFile {
  std::string path;  // the file read: the one asked for, or the report.json inside that folder
  std::string bytes;
  reports::RunReport report;
};

// Reads `path`, or the report.json inside it when it is a run's folder. Throws InputError for a
// missing, unreadable or malformed file, and for one whose verdict contradicts its checks (a
// hand-edited or damaged report would otherwise show PASS in one format and FAIL in another).
ReportFile load_report_file(const std::string& path);
reports::RunReport read_report_file(const std::string& path);

}  // namespace ddpbench::output
