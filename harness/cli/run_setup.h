// run_setup.h — a validated `ddpbench run`: flags resolved against the scenario's defaults and
// checked once, before anything runs, by the launching parent and by every worker alike.
#pragma once

#include <ATen/core/ScalarType.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/run_command.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "modes/ddp/distributed_model.h"
#include "modes/fault_injection.h"
#include "scenarios/scenario.h"

namespace ddpbench::cli {

struct RunSetup {
  const scenarios::ScenarioSpec* spec = nullptr;
  std::vector<std::string> modes;
  int64_t steps = 0;
  int64_t global_batch = 0;
  int64_t seed = 0;
  at::ScalarType dtype = at::kFloat;
  std::string dtype_name;
  int64_t world_size = 1;
  int64_t threads = 1;
  scenarios::BuildRequest request;
  std::string backend;
  std::chrono::milliseconds timeout{0};
  modes::ddp::DdpOptions ddp;
  std::optional<modes::FaultSpec> fault;
  std::string grad_check;    // "auto", "full", "fingerprint"
  bool sync_bn = false;      // DDP converts BatchNorm to SyncBN
  int64_t check_steps = 0;   // steps of the check phase (0 with --perf-only)
  int64_t perf_steps = 0;    // timed steps of the perf phase (0 with --check-only)
  int64_t warmup_steps = 0;  // discarded before the timed steps
  bool strong_scaling = false;
  bool progress = false;  // draw a progress line (stdout is a TTY and no --quiet)

  bool has_mode(const std::string& m) const;
};

// The run's plan over `dataset`: the scenario's sampler settings and seed, `replicas` ranks and
// `global_batch` samples per step.
data::GlobalBatchPlan make_plan(const RunSetup& setup, const data::Dataset& dataset,
                                int64_t replicas, int64_t global_batch);

// `world_size` overrides --gpus when an external launcher fixed it. Throws InputError.
RunSetup resolve_run(const RunCommandOptions& options, const scenarios::ScenarioRegistry& registry,
                     std::optional<int64_t> world_size);

}  // namespace ddpbench::cli
