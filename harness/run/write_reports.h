// write_reports.h — the end of every command that produces a report (run, scale, report): stage
// every file format rendered from the one RunReport, commit the output directory (files staged
// earlier, such as state files, go in together), print the console summary and where the files
// went.
#pragma once

#include <string>

#include "reports/run_record.h"
#include "run/output_dir.h"

namespace ddpbench::run {

// `also_wrote` completes the final line, e.g. " and state files".
void write_reports(const reports::RunReport& report, OutputDir& out,
                   const std::string& also_wrote = "");

}  // namespace ddpbench::run
