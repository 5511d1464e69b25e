// training_recipe.h — the loss and optimizer factories every mode shares (docs/ARCHITECTURE.md,
// contract 3: shared definition, separate gradient paths).
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

// Mean-reduced loss, as torch.nn.CrossEntropyLoss() / MSELoss() with default reduction, or the
// square root of MSELoss().
at::Tensor compute_loss(LossKind kind, const at::Tensor& output, const at::Tensor& target);

// Whether the loss of a batch is the mean of per-sample terms, so that the mean of equal-sized
// chunks' losses is the loss of the whole batch (true for cross-entropy and MSE, not for RMSE).
bool loss_is_sample_mean(LossKind kind);

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec,
                                                        std::vector<at::Tensor> parameters);

const char* loss_name(LossKind kind);

}  // namespace ddpbench::scenarios
