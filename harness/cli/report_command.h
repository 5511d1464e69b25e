// report_command.h — `ddpbench report run.json [--out DIR]`: regenerates every report format
// from a canonical report.json (JSON is canonical; the rest is rendered from it).
#pragma once

#include <CLI/App.hpp>
#include <string>

namespace ddpbench::cli {

struct ReportCommandOptions {
  // The report.json to render.
  std::string input;
  // Where to write the formats; empty = the input's directory.
  std::string out;
};

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& options);
int run_report_command(const ReportCommandOptions& options);

}  // namespace ddpbench::cli
