// list_command.h — `ddpbench list`: the registered scenarios with model, parameter count,
// dataset and default batch.
#pragma once

#include <CLI/App.hpp>

#include "scenarios/registry.h"

namespace ddpbench::cli {

struct ListCommandOptions {
  // "text" or "json".
  std::string format = "text";
};

CLI::App* add_list_command(CLI::App& app, ListCommandOptions& options);
int run_list_command(const ListCommandOptions& options,
                     const scenarios::ScenarioRegistry& registry);

}  // namespace ddpbench::cli
