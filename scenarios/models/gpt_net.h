// gpt_net.h — a decoder-only transformer laid out as nanoGPT's GPT (Karpathy's model.py, the
// model most data-parallel training of language models starts from): token and position
// embeddings (wte, wpe), n_layer pre-norm blocks of causal self-attention (one qkv projection,
// softmax(q k^T / sqrt(head_dim)) under a causal mask, dropout on the attention and after each
// projection) and a GELU MLP (4 x n_embd), a final LayerNorm, and the output projection tied to
// the token embedding: logits = x @ wte.weight^T. The tie is one parameter used twice, as
// nanoGPT's `self.transformer.wte.weight = self.lm_head.weight` leaves one tensor in
// model.parameters(): its gradient sums both uses, DDP reduces it once, zero shards it once.
// nanoGPT's init: N(0, 0.02) for every weight, N(0, 0.02 / sqrt(2 n_layer)) for the two
// residual projections, zero biases.
//
// Input: int64 token ids [B, T] with T <= block_size. Output: logits [B, vocab, T], the layout
// F.cross_entropy takes a sequence's classes in, so the scenario's mean cross-entropy is
// nanoGPT's F.cross_entropy(logits.view(-1, V), targets.view(-1)) (every sequence has T tokens).
// The dropout draws make the model draw random numbers: every mode seeds each rank chunk's
// forward alike (Note [Same random draws in every mode]).
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

struct GptConfig {
  int64_t vocab_size = 64;
  int64_t block_size = 16;
  int64_t n_layer = 2;
  int64_t n_head = 2;
  int64_t n_embd = 32;
  double dropout = 0.1;
};

class GptBlockImpl : public torch::nn::Cloneable<GptBlockImpl>, public ProbedModule {
 public:
  explicit GptBlockImpl(GptConfig config) : config_(config) { reset(); }
  void reset() override;
  // Zero stage 3 gathers each block as FSDP2's fully_shard on each block would (shard_units.h).
  bool is_shard_unit() const override { return true; }
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::Tensor attention(const torch::Tensor& x);
  GptConfig config_;
  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  torch::nn::Linear attn_qkv{nullptr}, attn_proj{nullptr}, mlp_fc{nullptr}, mlp_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr}, resid_dropout{nullptr};
};
TORCH_MODULE(GptBlock);

class GptImpl : public torch::nn::Cloneable<GptImpl>, public ProbedModule {
 public:
  explicit GptImpl(GptConfig config = {}) : config_(config) { reset(); }
  void reset() override;
  torch::Tensor forward(torch::Tensor tokens);

 private:
  GptConfig config_;
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::Dropout drop{nullptr};
  torch::nn::ModuleList h{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(Gpt);

}  // namespace ddpbench::scenarios::models
