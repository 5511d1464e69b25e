// resnet.h — torchvision's ResNet of BasicBlocks: with resnet18_shape() identical to
// torchvision.models.resnet18(num_classes=N): same module tree, parameter and buffer names and
// shapes (conv1, bn1, layer1.0.conv1, ..., layerK.0.downsample.0, fc), same forward, same init
// scheme (kaiming_normal_ fan_out/relu on convs, BN weight 1 bias 0, default Linear init) and the
// same order of random draws, so a seed gives the same weights as Python.
// tests/unit/scenarios_resnet18_parity_test.cpp holds it to that against torchvision. Other shapes
// (blocks per stage, stage widths) keep that layout, names and draw order: tiny_resnet_shape() is
// the BatchNorm network the tests prove BatchNorm properties on at a fraction of the cost.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <array>

#include "scenarios/models/batch_norm.h"
#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

// torchvision.models.resnet.BasicBlock (expansion 1).
class BasicBlockImpl : public torch::nn::Cloneable<BasicBlockImpl>, public ProbedModule {
 public:
  // with_downsample adds torchvision's `downsample` (conv1x1 + BN) on the identity branch.
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, bool with_downsample);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);
  // Each block is a unit, as FSDP2 users wrap a ResNet (fully_shard per block, then the root).
  bool is_shard_unit() const override { return true; }

 private:
  int64_t inplanes_, planes_, stride_;
  bool with_downsample_;
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

// Blocks per stage and the stages' widths (conv1 and bn1 take the first width).
struct ResNetShape {
  std::array<int64_t, 4> blocks;
  std::array<int64_t, 4> widths;
};
// torchvision.models.resnet18: [2, 2, 2, 2] blocks at widths 64..512 (11.2M parameters).
ResNetShape resnet18_shape();
// One block per stage at a quarter of ResNet-18's widths (16..128, 0.3M parameters): every
// structure ResNet-18 has (BatchNorm after every conv, residuals, strided downsampling, max-pool)
// at about 1/40 of its FLOPs.
ResNetShape tiny_resnet_shape();

class ResNetImpl : public torch::nn::Cloneable<ResNetImpl>, public ProbedModule {
 public:
  ResNetImpl(ResNetShape shape, int64_t num_classes);
  void reset() override;
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride);

  ResNetShape shape_;
  int64_t num_classes_;
  int64_t inplanes_ = 0;
  torch::nn::Conv2d conv1{nullptr};
  BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);

}  // namespace ddpbench::scenarios::models
