// batch_norm.cpp — see batch_norm.h.
#include "scenarios/models/batch_norm.h"

#include <torch/torch.h>

namespace ddpbench::scenarios::models {

BatchNorm2dImpl::BatchNorm2dImpl(int64_t features, double eps_, double momentum_)
    : num_features(features), eps(eps_), momentum(momentum_) {
  reset();
}

void BatchNorm2dImpl::reset() {
  // Registration order = PyTorch's _NormBase: weight, bias, running_mean, running_var,
  // num_batches_tracked.
  weight = register_parameter("weight", torch::ones({num_features}));
  bias = register_parameter("bias", torch::zeros({num_features}));
  running_mean = register_buffer("running_mean", torch::zeros({num_features}));
  running_var = register_buffer("running_var", torch::ones({num_features}));
  num_batches_tracked = register_buffer("num_batches_tracked", torch::tensor(int64_t{0}));
  override_ = nullptr;
}

torch::Tensor BatchNorm2dImpl::forward(const torch::Tensor& x) {
  if (override_) return override_(*this, x);
  if (is_training()) {
    torch::NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  // torch.nn.BatchNorm2d with momentum set: exponential_average_factor = momentum.
  return torch::batch_norm(x, weight, bias, running_mean, running_var, is_training(), momentum, eps,
                           /*cudnn_enabled=*/false);
}

}  // namespace ddpbench::scenarios::models
