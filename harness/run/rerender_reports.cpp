// rerender_reports.cpp — see rerender_reports.h.
#include "run/rerender_reports.h"

#include <filesystem>

#include "errors.h"
#include "run/output_dir.h"
#include "run/report_file.h"
#include "run/write_reports.h"

namespace ddpbench::run {
namespace fs = std::filesystem;

int rerender_reports(const ReportRequest& request) {
  const ReportFile file = load_report_file(request.input);
  const std::string& input = file.path;
  const reports::RunReport& report = file.report;

  std::string dir = request.out.empty() ? fs::path(input).parent_path().string() : request.out;
  if (dir.empty()) dir = ".";
  OutputDir out(dir, OutputPolicy::kAddFiles);
  // The input is never rewritten: into its own folder, report.json is left as it is.
  std::error_code ec;
  const bool onto_input = fs::equivalent(fs::path(dir) / "report.json", input, ec);
  ReportJson json{onto_input ? ReportJson::How::kLeave : ReportJson::How::kCopy, file.bytes};
  write_reports(report, out, "", json);
  // The exit code is the report's verdict, as it was for the run that wrote it.
  return report.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::run
