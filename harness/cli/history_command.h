// history_command.h — `ddpbench history`'s flags.
#pragma once

#include <CLI/CLI.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

CLI::App* add_history_command(CLI::App& app, requests::HistoryRequest& r);

}  // namespace ddpbench::cli
