// fit_checks.h — what the flags ask of the model, the data and the plan must hold before anything
// trains: each a refusal (InputError, exit 2) naming the problem and the fix, made by prepare_run
// in the parent and every rank alike, so a run never fails later on something it could have said
// at the start.
#pragma once

#include "data/batch_plan.h"
#include "requests/run_request.h"
#include "training/run_setup.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace ddpbench::run {

// The checks that need the scenario's model: what the flags ask of it must exist in it (--sync-bn
// under DDP needs BatchNorm layers, a buffer fault needs buffers; a TorchScript model's layers
// what its analysis allows). prepare_run makes them, and `scale` for every point before the first
// one starts.
void check_model_fits(const training::RunSetup& setup, torch::nn::Module& model);

// Uneven rank batches where a rank runs out of batches within the run: what Join's exact
// reference models, and where a `join` fault can fire.
void check_join_fits(const training::RunSetup& setup, torch::nn::Module& model,
                     const data::GlobalBatchPlan& plan);

// Gradient accumulation: every step's share of every rank splits into equal micro-batches.
void check_micro_batches(const training::RunSetup& setup, const data::GlobalBatchPlan& plan);

// The evaluation pass exists at the asked size, and the eval fault has a pass to corrupt.
void check_evaluation(const requests::RunRequest& request, const training::RunSetup& setup);

}  // namespace ddpbench::run
