// scale_command.h — `ddpbench scale --scenario S --gpus 1,2,4,8 [--modes ddp,dp]`: a scaling
// sweep over world sizes, perf only, merged into one report. The training flags are run's own
// (run_flags.h); the engine: commands/execute_scale.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_scale_command(CLI::App& app, requests::ScaleRequest& request);

}  // namespace ddpbench::cli
