// report_file.h — reads a report.json from disk for `report` and `gate`, with errors that name
// the file.
#pragma once

#include <string>

#include "reports/run_record.h"

namespace ddpbench::run {

// `path` itself, or the report.json inside it when it is a run's folder. Throws InputError when
// neither is a readable file.
std::string report_file_path(const std::string& path);

// Reads report_file_path(path). Throws InputError for a missing, unreadable or malformed file,
// and for one whose verdict contradicts its checks (a hand-edited or damaged report would
// otherwise show PASS in one format and FAIL in another).
reports::RunReport read_report_file(const std::string& path);

}  // namespace ddpbench::run
