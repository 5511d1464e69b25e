// resnet.h — ResNet-18 identical to torchvision.models.resnet18(num_classes=N): same module tree,
// parameter and buffer names and shapes (conv1, bn1, layer1.0.conv1, ..., layerK.0.downsample.0,
// fc), same forward, same init scheme (kaiming_normal_ fan_out/relu on convs, BN weight 1 bias 0,
// default Linear init) and the same order of random draws, so a seed gives the same weights as
// Python. tests/unit/scenarios_resnet18_parity_test.cpp holds it to that against torchvision.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "scenarios/models/batch_norm.h"

namespace ddpbench::scenarios::models {

// torchvision.models.resnet.BasicBlock (expansion 1).
class BasicBlockImpl : public torch::nn::Cloneable<BasicBlockImpl> {
 public:
  // with_downsample adds torchvision's `downsample` (conv1x1 + BN) on the identity branch.
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, bool with_downsample);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  int64_t inplanes_, planes_, stride_;
  bool with_downsample_;
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

class ResNet18Impl : public torch::nn::Cloneable<ResNet18Impl> {
 public:
  explicit ResNet18Impl(int64_t num_classes = 1000);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride);

  int64_t num_classes_;
  int64_t inplanes_ = 64;
  torch::nn::Conv2d conv1{nullptr};
  BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet18);

}  // namespace ddpbench::scenarios::models
