// resolve_run.h — `ddpbench run`'s request resolved against the scenario's defaults and checked:
// every flag's value, the combinations that cannot work together, the world against the cores,
// the device choice, the fault spec. The first step of prepare_run.h, and of `scale` for each of
// its points before the first one starts. Throws InputError (exit 2) naming the problem and the
// fix.
#pragma once

#include <cstdint>
#include <optional>

#include "requests/run_request.h"
#include "scenarios/registry.h"
#include "scenarios/scenario_config.h"
#include "training/run_setup.h"

namespace ddpbench::run {

// The scenario the request names: --scenario, or --config, and the KEY VALUE overrides.
scenarios::ScenarioSource scenario_source(const requests::RunRequest& request);

// `world_size` overrides the request's when an external launcher fixed it.
training::RunSetup resolve_run(const requests::RunRequest& request,
                               const scenarios::ScenarioRegistry& registry,
                               std::optional<int64_t> world_size);

}  // namespace ddpbench::run
