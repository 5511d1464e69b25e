// report_file.h — reads a report.json from disk for `report` and `gate`, with errors that name
// the file.
#pragma once

#include <string>

#include "reports/run/run_record.h"

namespace ddpbench::output {

// A report file as read once: its bytes (what `report` copies) and what they say.
struct ReportFile {
  std::string path;  // the file read: the one asked for, or the report.json inside that folder
  std::string bytes;
  reports::RunReport report;
};

// Why `path` (a run's folder, or its report.json or trace.pt) holds no finished run's results, in
// one line: a failed run's folder, a folder no run finished into, a folder that does not exist
// (Note [A folder without a report]); "" when that is not why (a finished run's folder, a file).
std::string why_no_results(const std::string& path);

// `path`, or the report.json inside it when it is a folder. Throws InputError saying what `path`
// is when it holds none (why_no_results), or when it is missing or not a regular file.
std::string report_json_path(const std::string& path);

// Reads `path`, or the report.json inside it when it is a run's folder. Throws InputError for a
// missing, unreadable or malformed file (naming a folder without a report as report_json_path
// does), and for one whose verdict contradicts its checks (a hand-edited or damaged report would
// otherwise show PASS in one format and FAIL in another).
ReportFile load_report_file(const std::string& path);
reports::RunReport read_report_file(const std::string& path);

}  // namespace ddpbench::output
