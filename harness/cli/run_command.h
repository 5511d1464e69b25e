// run_command.h — `ddpbench run`: train one scenario in the selected modes, write report.json and
// the final state of each mode to --out.
#pragma once

#include <CLI/App.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/registry.h"

namespace ddpbench::cli {

struct RunCommandOptions {
  // Scenario name (see `ddpbench list`).
  std::string scenario = scenarios::kDefaultScenario;
  // Comma-separated modes to run.
  std::vector<std::string> modes = {"single"};
  // Training steps; 0 = the scenario's default.
  int64_t steps = 0;
  // Global batch size; 0 = the scenario's default.
  int64_t batch_size = 0;
  // Seed for model init, sampler shuffle and augmentation; -1 = the scenario's default.
  int64_t seed = -1;
  // float32 or float64 (double exposes algorithmic differences that float32 rounding hides).
  std::string dtype = "float32";
  // Dataset directory; empty = the scenario's default data.
  std::string data_dir;
  // Output directory for report.json and state_<mode>.pt.
  std::string out = "ddpbench_out";
  // Intra-op threads per process; 0 = all cores.
  int64_t threads = 0;
};

CLI::App* add_run_command(CLI::App& app, RunCommandOptions& options);
int run_run_command(const RunCommandOptions& options, const scenarios::ScenarioRegistry& registry,
                    const std::vector<std::string>& argv);

}  // namespace ddpbench::cli
