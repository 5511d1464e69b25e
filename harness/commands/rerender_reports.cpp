// rerender_reports.cpp — see rerender_reports.h.
#include "commands/rerender_reports.h"

#include <filesystem>

#include "errors.h"
#include "output/output_dir.h"
#include "output/report_file.h"
#include "output/write_reports.h"

namespace ddpbench::commands {
namespace fs = std::filesystem;

int rerender_reports(const requests::ReportRequest& request) {
  const output::ReportFile file = output::load_report_file(request.input);
  const std::string& input = file.path;
  const reports::RunReport& report = file.report;

  std::string input_dir = fs::path(input).parent_path().string();
  if (input_dir.empty()) input_dir = ".";
  const std::string dir = request.out.empty() ? input_dir : request.out;
  // Into the report's own folder, the renderings are added beside it. Any other --out is owned
  // as a run owns its folder: a folder holding files no ddpbench run wrote is refused, and so is
  // one holding another run's results; an earlier rendering of this report is replaced whole.
  std::error_code ec;
  const bool own_folder = fs::equivalent(dir, input_dir, ec);
  output::OutputDir out(
      dir, own_folder ? output::OutputPolicy::kAddFiles : output::OutputPolicy::kOwnFolder,
      "report");
  // The input is never rewritten: into its own folder, report.json is left as it is.
  const bool onto_input = fs::equivalent(fs::path(out.path()) / "report.json", input, ec);
  output::ReportJson json{
      onto_input ? output::ReportJson::How::kLeave : output::ReportJson::How::kCopy, file.bytes};
  // Rendering never destroys results: another run's report.json or state files in `dir` are
  // refused, not replaced (Note [Rendering never destroys results], output_dir.h).
  out.refuse_to_replace_results("report", output::report_file_names(json), file.bytes);
  output::write_reports(report, out, "", json);
  // The exit code is the report's verdict, as it was for the run that wrote it.
  return report.verdict == reports::Verdict::kFail ? kExitCheckFailed : kExitOk;
}

}  // namespace ddpbench::commands
