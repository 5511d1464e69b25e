// project_command.h — `ddpbench project --from run.json [--devices 8,64,512]
// [--link-gbps 100,400] [--algo ring|tree] [--alpha-us 5] [--out DIR]`: a measured run's DDP
// scaling projected to other device counts and links. The engine: commands/execute_project.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_project_command(CLI::App& app, requests::ProjectRequest& request);

}  // namespace ddpbench::cli
