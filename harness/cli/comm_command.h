// comm_command.h — `ddpbench comm [--backend gloo|mpi|nccl] [--gpus N] [--min-bytes 8]
// [--max-bytes 16M] ...`: collective bandwidth, nccl-tests style. The engine:
// commands/execute_comm.h.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_comm_command(CLI::App& app, requests::CommRequest& request);

}  // namespace ddpbench::cli
