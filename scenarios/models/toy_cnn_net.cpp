// toy_cnn_net.cpp — see toy_cnn_net.h. Construction order = the tutorial's __init__ order, so the
// default initialisation draws match Python for the same seed.
#include "scenarios/models/toy_cnn_net.h"

#include <torch/nn/functional.h>

namespace ddpbench::scenarios::models {
namespace F = torch::nn::functional;
namespace nn = torch::nn;

void ToyCnnImpl::reset() {
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 6, 5)));
  conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)));
  fc1 = register_module("fc1", nn::Linear(16 * 5 * 5, 120));
  fc2 = register_module("fc2", nn::Linear(120, 84));
  fc3 = register_module("fc3", nn::Linear(84, 10));
}

torch::Tensor ToyCnnImpl::forward(torch::Tensor x) {
  x = F::max_pool2d(torch::relu(seen("conv1", conv1(x))), F::MaxPool2dFuncOptions(2).stride(2));
  x = F::max_pool2d(torch::relu(seen("conv2", conv2(x))), F::MaxPool2dFuncOptions(2).stride(2));
  x = torch::flatten(x, 1);
  x = torch::relu(seen("fc1", fc1(x)));
  x = torch::relu(seen("fc2", fc2(x)));
  return seen("fc3", fc3(x));
}

}  // namespace ddpbench::scenarios::models
