// gated_cnn_net.cpp — see gated_cnn_net.h.
#include "scenarios/models/gated_cnn_net.h"

#include <torch/nn/init.h>
#include <torch/utils.h>

namespace ddpbench::scenarios::models {
namespace nn = torch::nn;

void GatedCnnImpl::reset() {
  embedding = register_module("embedding", nn::Embedding(kVocabulary, kEmbedding));
  const auto conv = [] {
    return nn::Conv1d(nn::Conv1dOptions(kChannels, kChannels, kKernel).stride(kStride));
  };
  static_assert(kEmbedding == kChannels, "block 1 convolves the embedding");
  conv1_a = register_module("conv1_a", conv());
  conv1_b = register_module("conv1_b", conv());
  conv2_a = register_module("conv2_a", conv());
  conv2_b = register_module("conv2_b", conv());
  fc1 = register_module("fc1", nn::Linear(kChannels, kHidden));
  fc2 = register_module("fc2", nn::Linear(kHidden, kClasses));
  // After every default initialiser, as a Python init_weights() would run it.
  torch::NoGradGuard no_grad;
  nn::init::xavier_uniform_(embedding->weight);
}

torch::Tensor GatedCnnImpl::forward(torch::Tensor tokens) {
  if (tokens.size(1) < kMinLength) {
    tokens = torch::constant_pad_nd(tokens, {0, kMinLength - tokens.size(1)}, 0);
  }
  torch::Tensor x = seen("embedding", embedding(tokens)).transpose(1, 2);  // [B, channels, time]
  x = seen("gate1", seen("conv1_a", conv1_a(x)) * torch::sigmoid(seen("conv1_b", conv1_b(x))));
  x = seen("gate2", seen("conv2_a", conv2_a(x)) * torch::sigmoid(seen("conv2_b", conv2_b(x))));
  return seen("fc2", fc2(seen("fc1", fc1(x.mean(2)))));
}

}  // namespace ddpbench::scenarios::models
