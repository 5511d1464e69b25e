// write_reports.h — the end of every command that produces a report (run, scale, report): stage
// every file format rendered from the one RunReport, commit the output directory (files staged
// earlier, such as state files, go in together), print the console summary and where the files
// went.
#pragma once

#include <string>
#include <vector>

#include "output/output_dir.h"
#include "reports/run/run_record.h"

namespace ddpbench::output {

// How report.json gets into the folder: rendered from the report (run, scale), copied byte for
// byte from the file the report was read from (`report`: fields this version does not know
// survive), or not written at all (`report` into the folder of its own input, never rewritten).
struct ReportJson {
  enum class How { kRender, kCopy, kLeave } how = How::kRender;
  std::string bytes;  // kCopy
};

// The names write_reports stages with `json` (what `report` may replace: output_dir.h).
std::vector<std::string> report_file_names(const ReportJson& json);

// `also_wrote` completes the final line, e.g. " and state files".
void write_reports(const reports::RunReport& report, OutputDir& out,
                   const std::string& also_wrote = "", const ReportJson& json = {});

}  // namespace ddpbench::output
