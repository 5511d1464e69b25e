// resnet.cpp — see resnet.h. Mirrors torchvision/models/resnet.py (0.14) statement by statement
// where the order matters for parameter names or for the sequence of random draws.
#include "scenarios/models/resnet.h"

#include <torch/nn/functional.h>
#include <torch/nn/init.h>

namespace ddpbench::scenarios::models {
namespace F = torch::nn::functional;
namespace nn = torch::nn;

namespace {

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride,
                               bool with_downsample)
    : inplanes_(inplanes), planes_(planes), stride_(stride), with_downsample_(with_downsample) {
  reset();
}

void BasicBlockImpl::reset() {
  // torchvision's _make_layer builds `downsample` before the block, so its conv draws its
  // random init first; it is registered last, after bn2, which fixes the parameter order.
  nn::Sequential downsample{nullptr};
  if (with_downsample_) {
    downsample = nn::Sequential(conv1x1(inplanes_, planes_, stride_), BatchNorm2d(planes_));
  }
  conv1 = register_module("conv1", conv3x3(inplanes_, planes_, stride_));
  bn1 = register_module("bn1", BatchNorm2d(planes_));
  conv2 = register_module("conv2", conv3x3(planes_, planes_, 1));
  bn2 = register_module("bn2", BatchNorm2d(planes_));
  if (downsample) downsample_ = register_module("downsample", downsample);
}

torch::Tensor BasicBlockImpl::forward(torch::Tensor x) {
  entering();
  torch::Tensor identity = x;
  torch::Tensor out = seen("relu1", torch::relu(seen("bn1", bn1(seen("conv1", conv1(x))))));
  out = seen("bn2", bn2(seen("conv2", conv2(out))));
  if (downsample_) identity = seen("downsample", downsample_->forward(x));
  return seen("relu2", torch::relu(out + identity));
}

ResNetShape resnet18_shape() { return {{2, 2, 2, 2}, {64, 128, 256, 512}}; }

ResNetShape tiny_resnet_shape() { return {{1, 1, 1, 1}, {16, 32, 64, 128}}; }

ResNetImpl::ResNetImpl(ResNetShape shape, int64_t num_classes)
    : shape_(shape), num_classes_(num_classes) {
  reset();
}

nn::Sequential ResNetImpl::make_layer(int64_t planes, int64_t blocks, int64_t stride) {
  const bool with_downsample = stride != 1 || inplanes_ != planes;
  nn::Sequential layer;
  layer->push_back(BasicBlock(inplanes_, planes, stride, with_downsample));
  inplanes_ = planes;
  for (int64_t i = 1; i < blocks; ++i) layer->push_back(BasicBlock(inplanes_, planes, 1, false));
  return layer;
}

void ResNetImpl::reset() {
  const auto& w = shape_.widths;
  const auto& b = shape_.blocks;
  inplanes_ = w[0];
  conv1 = register_module(
      "conv1", nn::Conv2d(nn::Conv2dOptions(3, w[0], 7).stride(2).padding(3).bias(false)));
  bn1 = register_module("bn1", BatchNorm2d(w[0]));
  layer1 = register_module("layer1", make_layer(w[0], b[0], 1));
  layer2 = register_module("layer2", make_layer(w[1], b[1], 2));
  layer3 = register_module("layer3", make_layer(w[2], b[2], 2));
  layer4 = register_module("layer4", make_layer(w[3], b[3], 2));
  fc = register_module("fc", nn::Linear(w[3], num_classes_));

  // torchvision: for m in self.modules(): kaiming_normal_ on Conv2d (fan_out, relu),
  // constant 1 / 0 on BatchNorm. modules() is registration order, which fixes the draw order.
  for (const auto& m : modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = m->as<BatchNorm2d>()) {
      nn::init::constant_(bn->weight, 1.0);
      nn::init::constant_(bn->bias, 0.0);
    }
  }
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  x = seen("relu", torch::relu(seen("bn1", bn1(seen("conv1", conv1(x))))));
  x = seen("maxpool", F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1)));
  x = layer4->forward(layer3->forward(layer2->forward(layer1->forward(x))));
  x = seen("avgpool", F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)));
  return seen("fc", fc(torch::flatten(x, 1)));
}

}  // namespace ddpbench::scenarios::models
