// toy_cnn_net.h — the PyTorch CIFAR-10 tutorial network ("Training a Classifier"):
// conv(3->6, k5) -> relu -> maxpool 2 -> conv(6->16, k5) -> relu -> maxpool 2 -> fc
// 400->120->84->10. Module names (conv1, conv2, fc1, fc2, fc3) match the tutorial's so states map
// one to one.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

class ToyCnnImpl : public torch::nn::Cloneable<ToyCnnImpl>, public ProbedModule {
 public:
  ToyCnnImpl() { reset(); }
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
TORCH_MODULE(ToyCnn);

}  // namespace ddpbench::scenarios::models
