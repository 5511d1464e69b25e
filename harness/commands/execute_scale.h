// execute_scale.h — `ddpbench scale`, once its flags are parsed: a scaling sweep. Each world size
// K is one perf-only run (a child process of this binary, so a failing point cannot take the
// sweep's bookkeeping down with it), built from the shared request as a typed RunRequest; the
// points are merged into one report with one result per (mode, K) plus one single-device
// baseline.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "requests/run_request.h"

namespace ddpbench::scenarios {
class ScenarioRegistry;
}

namespace ddpbench::commands {

// Every point is validated before the first one runs (bad input: InputError, nothing started).
// `argv` is this process's command line, recorded in the merged report.
int execute_scale(const requests::ScaleRequest& request,
                  const scenarios::ScenarioRegistry& registry, const std::vector<std::string>& argv,
                  const requests::CommandLineOf& command_line);

}  // namespace ddpbench::commands
