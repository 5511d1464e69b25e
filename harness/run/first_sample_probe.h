// first_sample_probe.h — one forward and loss of the first training sample before anything
// starts, for a --model, --data or synthetic data that ddpbench did not write: a model that does
// not fit the data, or data that does not fit the model or the loss, is refused (exit 2) in one
// line naming the shapes, and the evaluation pass is sized by how much the model outputs. Then one
// training step on the smallest batch the run trains on, under --amp as the run computes.
#pragma once

#include <torch/nn/modules/container/any.h>

#include <cstdint>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "requests/run_request.h"
#include "training/run_setup.h"

namespace ddpbench::run {

// In eval mode and without autograd; throws InputError. Returns how many values the model
// outputs for one sample.
int64_t check_first_sample(const training::RunSetup& setup, const data::Dataset& dataset,
                           torch::nn::AnyModule& model);

// The fewest samples one training forward of this run sees: a replica's share of a step (the
// epoch's last, short step included), over --accumulation-steps micro-batches; the whole batch
// when single is the only mode. 0 when the plan gives no step.
int64_t smallest_training_batch(const training::RunSetup& setup, const data::GlobalBatchPlan& plan);

// One training step's forward, loss and backward in train mode, on `batch` copies of the first
// sample (the smallest batch the run trains on), first as the run's dtype computes it and then
// under --amp's autocast on the CPU: a model that cannot train on that batch (BatchNorm on one
// value per channel, a reshape that needs more rows) or an op this libtorch lacks in bfloat16 on
// the CPU (hardtanh's backward, mish) is refused here (InputError: the batch's shape or the op,
// the cause line of the error and the fix) instead of failing every rank with exit 3. The model's
// buffers, its gradients and the default generator are left as they were. Probed only for a
// small batch (at most kProbedBatch) or an autocast run, where it costs one step.
inline constexpr int64_t kProbedBatch = 8;
void check_training_step(const training::RunSetup& setup, const data::Dataset& dataset,
                         torch::nn::AnyModule& model, int64_t batch);

// Caps the default evaluation pass of a model with many outputs per sample (unless --eval-size
// was given), and notes why in the setup.
void size_evaluation_by_output(const requests::RunRequest& request, int64_t outputs_per_sample,
                               training::RunSetup& setup);

}  // namespace ddpbench::run
