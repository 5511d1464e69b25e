// report_command.cpp — see report_command.h.
#include "cli/report_command.h"

namespace ddpbench::cli {

CLI::App* add_report_command(CLI::App& app, requests::ReportRequest& r) {
  CLI::App* cmd = app.add_subcommand("report", "Regenerate every report format from a report.json");
  cmd->add_option("input", r.input, "report.json written by `ddpbench run`")->required();
  cmd->add_option("--out", r.out, "Output directory (default: the input's directory)");
  return cmd;
}

}  // namespace ddpbench::cli
