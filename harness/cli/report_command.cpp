// report_command.cpp — see report_command.h.
#include "cli/report_command.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/output_dir.h"
#include "cli/report_file.h"
#include "errors.h"
#include "reports/console_reporter.h"
#include "reports/reporter.h"

namespace ddpbench::cli {

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("report", "Regenerate every report format from a report.json");
  cmd->add_option("input", o.input, "report.json written by `ddpbench run`")->required();
  cmd->add_option("--out", o.out, "Output directory (default: the input's directory)");
  return cmd;
}

int run_report_command(const ReportCommandOptions& o) {
  const reports::RunReport report = read_report_file(o.input);
  const std::string dir =
      o.out.empty() ? std::filesystem::path(o.input).parent_path().string() : o.out;
  OutputDir out(dir.empty() ? "." : dir);
  for (const auto& reporter : reports::file_reporters()) {
    out.stage(reporter->file_name(), reporter->render(report));
  }
  out.commit();
  fmt::print("{}", reports::ConsoleReporter().render(report));
  fmt::print("wrote {}/report.{{json,csv,junit.xml,md,html}}\n", out.path());
  return kExitOk;
}

}  // namespace ddpbench::cli
