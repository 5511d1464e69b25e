// resume.h — `--resume FILE`: the checkpoint read (checkpoint/checkpoint.h) and checked against
// the run it should continue. A resumed run continues the trajectory of the mode that saved it
// bit for bit only when everything that shapes that trajectory is the same, so the scenario, seed,
// global batch, world size and dtype must match, the saved mode must be one of the run's, and the
// run's plan must put the checkpoint's step in the epoch it was saved in. Every refusal is one
// InputError line (exit 2) naming the mismatch and the fix, made in prepare_run before anything
// is written or any rank joins (every rank reads the file itself).
#pragma once

#include <memory>
#include <string>

#include "data/batch_plan.h"
#include "checkpoint/checkpoint.h"
#include "scenarios/registry.h"
#include "training/run_setup.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::run {

// `model` is a fresh instance of the run's scenario (its names, shapes and dtypes); `registry`
// tells a built-in scenario's name (pass --scenario) from a scenario file's (pass --config).
std::shared_ptr<const checkpoint::Checkpoint> load_resume(const std::string& path,
                                                     const training::RunSetup& setup,
                                                     const scenarios::ScenarioRegistry& registry,
                                                     const torch::nn::Module& model,
                                                     const data::GlobalBatchPlan& plan);

}  // namespace ddpbench::run
