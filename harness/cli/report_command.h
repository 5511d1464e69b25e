// report_command.h — `ddpbench report run.json [--out DIR]`: regenerates every report format
// from a canonical report.json. The engine: commands/rerender_reports.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_report_command(CLI::App& app, requests::ReportRequest& request);

}  // namespace ddpbench::cli
