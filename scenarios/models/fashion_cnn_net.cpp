// fashion_cnn_net.cpp — see fashion_cnn_net.h.
#include "scenarios/models/fashion_cnn_net.h"

#include <torch/nn/functional.h>

namespace ddpbench::scenarios::models {
namespace F = torch::nn::functional;
namespace nn = torch::nn;

void FashionCnnImpl::reset() {
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)));
  conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)));
  fc = register_module("fc", nn::Linear(32 * 7 * 7, 10));
}

torch::Tensor FashionCnnImpl::forward(torch::Tensor x) {
  x = F::max_pool2d(torch::relu(seen("conv1", conv1(x))), F::MaxPool2dFuncOptions(2).stride(2));
  x = F::max_pool2d(torch::relu(seen("conv2", conv2(x))), F::MaxPool2dFuncOptions(2).stride(2));
  return seen("fc", fc(torch::flatten(x, 1)));
}

}  // namespace ddpbench::scenarios::models
