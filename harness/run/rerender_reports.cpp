// rerender_reports.cpp — see rerender_reports.h.
#include "run/rerender_reports.h"

#include <filesystem>

#include "errors.h"
#include "run/output_dir.h"
#include "run/report_file.h"
#include "run/write_reports.h"

namespace ddpbench::run {

int rerender_reports(const ReportRequest& request) {
  const reports::RunReport report = read_report_file(request.input);
  const std::string dir = request.out.empty()
                              ? std::filesystem::path(request.input).parent_path().string()
                              : request.out;
  OutputDir out(dir.empty() ? "." : dir);
  write_reports(report, out);
  return kExitOk;
}

}  // namespace ddpbench::run
