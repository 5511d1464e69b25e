// mlp_net.cpp — see mlp_net.h.
#include "scenarios/models/mlp_net.h"

#include <torch/torch.h>

namespace ddpbench::scenarios::models {

void MlpImpl::reset() {
  fc1 = register_module("fc1", torch::nn::Linear(in_, hidden_));
  fc2 = register_module("fc2", torch::nn::Linear(hidden_, out_));
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  return seen("fc2", fc2(torch::tanh(seen("fc1", fc1(x)))));
}

}  // namespace ddpbench::scenarios::models
