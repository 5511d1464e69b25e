// list_command.h — `ddpbench list`: the registered scenarios with model, parameter count,
// dataset and default batch; `list --yaml NAME`, one of them as a scenario file to start from;
// `list --keys`, what a scenario file may set; `list --flags`, the flag reference of `run`
// (docs/flags.md).
#pragma once

#include <CLI/App.hpp>

#include "scenarios/registry.h"

namespace ddpbench::cli {

struct ListCommandOptions {
  // "text" or "json".
  std::string format = "text";
  // A scenario to print as a scenario file (YAML) instead of the table; empty = the table.
  std::string yaml;
  // Print every key a scenario file may set (scenarios/scenario_keys.h) instead of the table.
  bool keys = false;
  // Print the flag reference of `run` and `scale` (cli/flag_reference.h) instead of the table.
  bool flags = false;
};

CLI::App* add_list_command(CLI::App& app, ListCommandOptions& options);
int run_list_command(const ListCommandOptions& options,
                     const scenarios::ScenarioRegistry& registry);

}  // namespace ddpbench::cli
