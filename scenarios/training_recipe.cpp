// training_recipe.cpp — see training_recipe.h.
#include "scenarios/training_recipe.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

namespace ddpbench::scenarios {

at::Tensor compute_loss(LossKind kind, const at::Tensor& output, const at::Tensor& target) {
  switch (kind) {
    case LossKind::kCrossEntropy:
      return torch::nn::functional::cross_entropy(output, target);
    case LossKind::kMse:
      return torch::nn::functional::mse_loss(output, target);
  }
  throw std::logic_error("unknown loss kind");
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec,
                                                        std::vector<at::Tensor> parameters) {
  return std::make_unique<torch::optim::SGD>(std::move(parameters),
                                             torch::optim::SGDOptions(spec.lr)
                                                 .momentum(spec.momentum)
                                                 .dampening(spec.dampening)
                                                 .weight_decay(spec.weight_decay)
                                                 .nesterov(spec.nesterov));
}

const char* loss_name(LossKind kind) {
  return kind == LossKind::kCrossEntropy ? "CrossEntropyLoss" : "MSELoss";
}

}  // namespace ddpbench::scenarios
