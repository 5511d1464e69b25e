// first_sample_probe.h — one forward and loss of the first training sample before anything
// starts, for a --model, --data or synthetic data that ddpbench did not write: a model that does
// not fit the data, or data that does not fit the model or the loss, is refused (exit 2) in one
// line naming the shapes, and the evaluation pass is sized by how much the model outputs.
#pragma once

#include <torch/nn/modules/container/any.h>

#include <cstdint>

#include "data/dataset.h"
#include "requests/run_request.h"
#include "training/run_setup.h"

namespace ddpbench::run {

// In eval mode and without autograd; throws InputError. Returns how many values the model
// outputs for one sample.
int64_t check_first_sample(const training::RunSetup& setup, const data::Dataset& dataset,
                           torch::nn::AnyModule& model);

// Caps the default evaluation pass of a model with many outputs per sample (unless --eval-size
// was given), and notes why in the setup.
void size_evaluation_by_output(const RunRequest& request, int64_t outputs_per_sample,
                               training::RunSetup& setup);

}  // namespace ddpbench::run
