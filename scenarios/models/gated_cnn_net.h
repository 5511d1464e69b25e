// gated_cnn_net.h — a gated convolutional text classifier (Dauphin et al. 2017's gated linear
// units, over time): Embedding(15000, 64, xavier-uniform) -> two blocks H = conv_a(x) *
// sigmoid(conv_b(x)) with Conv1d(64 -> 64, kernel 15, stride 7) -> mean over time ->
// Linear(64, 128) -> Linear(128, 2), logits. No activation between the two linear layers (the
// issue's recipe). No BatchNorm: every mode must agree with single-device training.
//
// Input: int64 token ids [B, L], right-padded with id 0. Block 2 needs 15 outputs of block 1,
// which need 15 + 14 * 7 = 113 tokens: shorter batches are padded with id 0 to kMinLength
// first (as collate pads, so a short batch is the same as one padded further by the data).
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

class GatedCnnImpl : public torch::nn::Cloneable<GatedCnnImpl>, public ProbedModule {
 public:
  static constexpr int64_t kVocabulary = 15000;
  static constexpr int64_t kEmbedding = 64;
  static constexpr int64_t kChannels = 64;
  static constexpr int64_t kKernel = 15;
  static constexpr int64_t kStride = 7;
  static constexpr int64_t kHidden = 128;
  static constexpr int64_t kClasses = 2;
  // The shortest sequence both blocks can convolve.
  static constexpr int64_t kMinLength = kKernel + (kKernel - 1) * kStride;

  GatedCnnImpl() { reset(); }
  void reset() override;
  torch::Tensor forward(torch::Tensor tokens);

 private:
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Conv1d conv1_a{nullptr}, conv1_b{nullptr}, conv2_a{nullptr}, conv2_b{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(GatedCnn);

}  // namespace ddpbench::scenarios::models
