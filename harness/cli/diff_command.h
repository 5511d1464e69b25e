// diff_command.h — `ddpbench diff A B [--expect rounding|identical] [--out DIR]`: the same
// experiment under two environments (two runs with --trace), tensor by tensor, naming the first
// divergence. Exit 0 when nothing diverged, 1 when something did (with --expect identical: when
// anything differs), 2 for traces of different experiments or a damaged trace. The engine:
// commands/execute_diff.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_diff_command(CLI::App& app, requests::DiffRequest& request);

}  // namespace ddpbench::cli
