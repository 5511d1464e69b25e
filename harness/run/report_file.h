// report_file.h — reads a report.json from disk for `report` and `gate`, with errors that name
// the file.
#pragma once

#include <string>

#include "reports/run_record.h"

namespace ddpbench::run {

// Throws InputError for a missing, unreadable or malformed file.
reports::RunReport read_report_file(const std::string& path);

}  // namespace ddpbench::run
