// ab_command.h — `ddpbench ab --baseline-bin OLD [--current-bin NEW] [--rounds R] -- RUN ARGS`:
// the interleaved A/B gate, both builds measured in one job (exit 1 on a regression). The engine:
// commands/execute_ab.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_ab_command(CLI::App& app, requests::AbRequest& request);

}  // namespace ddpbench::cli
