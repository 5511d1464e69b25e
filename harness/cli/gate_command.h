// gate_command.h — `ddpbench gate --baseline base.json --current cur.json [--max-slowdown F]
// [--thresholds ci/gate.yaml] [--format text|md]`: the CI regression gate (exit 1 on regression).
// The engine: commands/execute_gate.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_gate_command(CLI::App& app, requests::GateRequest& request);

}  // namespace ddpbench::cli
