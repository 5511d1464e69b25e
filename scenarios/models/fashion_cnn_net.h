// fashion_cnn_net.h — a small CNN for 1x28x28 Fashion-MNIST images:
// conv(1->16, k3, pad 1) -> relu -> maxpool 2 -> conv(16->32, k3, pad 1) -> relu -> maxpool 2
// -> fc 1568->10. No BatchNorm, so every mode must agree with single-device training.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

class FashionCnnImpl : public torch::nn::Cloneable<FashionCnnImpl>, public ProbedModule {
 public:
  FashionCnnImpl() { reset(); }
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(FashionCnn);

}  // namespace ddpbench::scenarios::models
