// training_recipe.cpp — see training_recipe.h.
#include "scenarios/training_recipe.h"

#include <torch/nn/functional/loss.h>

#include "scenarios/optim/multi_tensor_sgd.h"

namespace ddpbench::scenarios {

at::Tensor compute_loss(LossKind kind, const at::Tensor& output, const at::Tensor& target) {
  switch (kind) {
    case LossKind::kCrossEntropy:
      return torch::nn::functional::cross_entropy(output, target);
    case LossKind::kMse:
      return torch::nn::functional::mse_loss(output, target);
    case LossKind::kRmse:
      return torch::nn::functional::mse_loss(output, target).sqrt();
  }
  throw std::logic_error("unknown loss kind");
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec,
                                                        std::vector<at::Tensor> parameters) {
  // Multi-tensor kernels, as Python's SGD on CUDA; same arithmetic as torch::optim::SGD.
  return std::make_unique<MultiTensorSGD>(std::move(parameters),
                                          torch::optim::SGDOptions(spec.lr)
                                              .momentum(spec.momentum)
                                              .dampening(spec.dampening)
                                              .weight_decay(spec.weight_decay)
                                              .nesterov(spec.nesterov));
}

bool loss_is_sample_mean(LossKind kind) { return kind != LossKind::kRmse; }

const char* loss_name(LossKind kind) {
  switch (kind) {
    case LossKind::kCrossEntropy:
      return "CrossEntropyLoss";
    case LossKind::kMse:
      return "MSELoss";
    case LossKind::kRmse:
      return "sqrt(MSELoss)";
  }
  return "?";
}

}  // namespace ddpbench::scenarios
