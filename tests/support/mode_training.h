// mode_training.h — one call that trains a scenario instance in one mode on the CPU, for tests
// that check a mode's arithmetic (the engine's phases add fresh models and timing on top).
#pragma once

#include <ATen/core/ScalarType.h>

#include <cstdint>

#include "data/batch_plan.h"
#include "modes/common/step_loop.h"
#include "scenarios/scenario.h"

namespace ddpbench::testing {

// Checked training: losses, gradients and final state are recorded.
modes::TrainResult train_single(const scenarios::ScenarioSpec& spec,
                                scenarios::ScenarioInstance& instance,
                                const data::GlobalBatchPlan& plan, int64_t steps,
                                at::ScalarType dtype);

// DataParallel with the plan's number of replicas.
modes::TrainResult train_data_parallel(const scenarios::ScenarioSpec& spec,
                                       scenarios::ScenarioInstance& instance,
                                       const data::GlobalBatchPlan& plan, int64_t steps,
                                       at::ScalarType dtype);

}  // namespace ddpbench::testing
