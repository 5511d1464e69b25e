// run_command.h — `ddpbench run`: train one scenario in the selected modes, compare every mode
// with single-device training, write the report and the final state of each mode to --out. The
// same command is what spawned workers (and torchrun / srun / mpirun ranks) execute. Flags:
// run_flags.h; the engine: run/execute_run.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_run_command(CLI::App& app, requests::RunRequest& request);

}  // namespace ddpbench::cli
