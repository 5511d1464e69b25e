// scenarios_memory_format_test.cpp — MODEL.CHANNELS_LAST's pieces: a model's 4-D parameters and
// buffers become channels_last in place (the same tensors, so optimizers and hooks still hold
// them; 1-D ones untouched), image inputs take the format and others keep theirs, and a flat
// bucket's view of a parameter takes the parameter's strides (a gradient written there keeps its
// layout, as PyTorch's bucket views do) while a contiguous parameter's is a plain view.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "modes/common/layout_view.h"
#include "scenarios/memory_format.h"

namespace ddpbench::scenarios {
namespace {

struct ConvNetImpl : torch::nn::Module {
  ConvNetImpl()
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3)))),
        bn(register_module("bn", torch::nn::BatchNorm2d(4))),
        fc(register_module("fc", torch::nn::Linear(4, 2))) {}
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Linear fc;
};
TORCH_MODULE(ConvNet);

TEST(MemoryFormat, FourDimensionalParametersBecomeChannelsLastInPlace) {
  ConvNet net;
  const at::Tensor weight = net->conv->weight;
  const at::Tensor before = weight.detach().clone();
  EXPECT_EQ(to_channels_last(*net), 1);  // conv.weight only: biases, BatchNorm and fc are 1-2-D
  EXPECT_TRUE(net->conv->weight.is_same(weight));  // the same tensor, its layout changed
  EXPECT_FALSE(net->conv->weight.is_contiguous());
  EXPECT_TRUE(net->conv->weight.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(at::equal(net->conv->weight, before));
  EXPECT_TRUE(net->fc->weight.is_contiguous());
}

TEST(MemoryFormat, ImageInputsTakeTheFormatAndOthersKeepTheirs) {
  const at::Tensor images = at::randn({2, 3, 4, 4});
  const at::Tensor converted = in_memory_format(images, at::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(converted.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(converted.is_contiguous());
  EXPECT_TRUE(at::equal(converted, images));
  const at::Tensor tokens = at::zeros({2, 7}, at::kLong);
  EXPECT_TRUE(in_memory_format(tokens, at::MemoryFormat::ChannelsLast).is_same(tokens));
  EXPECT_TRUE(in_memory_format(images, at::MemoryFormat::Contiguous).is_same(images));
}

TEST(LayoutView, ABucketSliceTakesTheParametersStrides) {
  const at::Tensor weight = at::randn({4, 3, 2, 2}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor flat = at::zeros({5 + weight.numel()});
  const at::Tensor slot = modes::view_in_layout_of(flat.narrow(0, 5, weight.numel()), weight);
  EXPECT_EQ(slot.strides(), weight.strides());
  EXPECT_EQ(slot.data_ptr(), flat.narrow(0, 5, 1).data_ptr());
  slot.copy_(weight);  // the bucket holds the gradient in the parameter's memory order
  EXPECT_TRUE(
      at::equal(flat.narrow(0, 5, weight.numel()), weight.permute({0, 2, 3, 1}).reshape({-1})));
  const at::Tensor plain = at::randn({4, 3});
  EXPECT_EQ(modes::view_in_layout_of(flat.narrow(0, 0, 12), plain).strides(), plain.strides());
}

}  // namespace
}  // namespace ddpbench::scenarios
