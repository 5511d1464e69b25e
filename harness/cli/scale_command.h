// scale_command.h — `ddpbench scale --scenario S --gpus 1,2,4,8 [--modes ddp,dp]`: a scaling
// sweep. Each world size K is one perf-only `ddpbench run` (a child process of this binary, so a
// failing point cannot take the sweep's bookkeeping down with it); the points are merged into one
// report with one result per (mode, K) plus the single-device baseline.
#pragma once

#include <CLI/App.hpp>
#include <string>
#include <vector>

#include "scenarios/registry.h"

namespace ddpbench::cli {

struct ScaleCommandOptions {
  // Scenario name.
  std::string scenario = "cifar_resnet18";
  // World sizes to sweep.
  std::vector<int64_t> gpus = {1, 2};
  // Modes to time at every K: ddp, dp.
  std::vector<std::string> modes = {"ddp"};
  // Timed steps and warm-up steps per point.
  int64_t steps = 5;
  int64_t warmup = 2;
  // Weak scaling (default): per-device batch fixed, global batch = per-device x K.
  // Strong scaling: global batch fixed.
  bool strong = false;
  // Weak: per-device batch (default: the scenario's batch / the largest K).
  // Strong: global batch (default: the scenario's).
  int64_t batch_size = 0;
  std::string backend = "gloo";
  std::string dtype;
  std::string out = "ddpbench_scale";
};

CLI::App* add_scale_command(CLI::App& app, ScaleCommandOptions& options);
int run_scale_command(const ScaleCommandOptions& options,
                      const scenarios::ScenarioRegistry& registry);

}  // namespace ddpbench::cli
