// gpt_net.cpp — see gpt_net.h. Every operation follows nanoGPT's CausalSelfAttention, MLP, Block
// and GPT.forward in order (reference/torch_ddp_oracle_models.py's GptTiny is the same in Python),
// except the explicit attention, which nanoGPT takes when flash attention is off: the oracle and
// every libtorch release compute the same operations.
#include "scenarios/models/gpt_net.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/linear.h>
#include <torch/nn/init.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace ddpbench::scenarios::models {
namespace nn = torch::nn;

namespace {

nn::Linear normal_linear(int64_t in, int64_t out, double stddev) {
  nn::Linear linear(in, out);
  torch::NoGradGuard no_grad;
  nn::init::normal_(linear->weight, 0.0, stddev);
  nn::init::zeros_(linear->bias);
  return linear;
}

nn::LayerNorm layer_norm(int64_t n) { return nn::LayerNorm(nn::LayerNormOptions({n})); }

}  // namespace

void GptBlockImpl::reset() {
  const int64_t d = config_.n_embd;
  // Registration order is state_dict order, nanoGPT's: ln_1, attn, ln_2, mlp.
  ln_1 = register_module("ln_1", layer_norm(d));
  attn_qkv = register_module("attn_qkv", normal_linear(d, 3 * d, 0.02));
  attn_proj = register_module(
      "attn_proj",
      normal_linear(d, d, 0.02 / std::sqrt(2.0 * static_cast<double>(config_.n_layer))));
  ln_2 = register_module("ln_2", layer_norm(d));
  mlp_fc = register_module("mlp_fc", normal_linear(d, 4 * d, 0.02));
  mlp_proj = register_module(
      "mlp_proj",
      normal_linear(4 * d, d, 0.02 / std::sqrt(2.0 * static_cast<double>(config_.n_layer))));
  attn_dropout = register_module("attn_dropout", nn::Dropout(config_.dropout));
  resid_dropout = register_module("resid_dropout", nn::Dropout(config_.dropout));
}

torch::Tensor GptBlockImpl::attention(const torch::Tensor& x) {
  const int64_t b = x.size(0);
  const int64_t t = x.size(1);
  const int64_t c = x.size(2);
  const int64_t heads = config_.n_head;
  const std::vector<torch::Tensor> qkv = seen("attn_qkv", attn_qkv(x)).split(c, 2);
  const auto per_head = [&](const torch::Tensor& y) {
    return y.view({b, t, heads, c / heads}).transpose(1, 2);  // [B, nh, T, hs]
  };
  const torch::Tensor q = per_head(qkv[0]);
  const torch::Tensor k = per_head(qkv[1]);
  const torch::Tensor v = per_head(qkv[2]);
  torch::Tensor att =
      q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(k.size(-1))));
  const torch::Tensor causal =
      torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).tril();
  att = att.masked_fill(causal.logical_not(), -std::numeric_limits<double>::infinity());
  att = attn_dropout(torch::softmax(att, -1));
  const torch::Tensor y = att.matmul(v).transpose(1, 2).contiguous().view({b, t, c});
  return resid_dropout(seen("attn_proj", attn_proj(y)));
}

torch::Tensor GptBlockImpl::forward(torch::Tensor x) {
  entering();
  x = x + attention(seen("ln_1", ln_1(x)));
  const torch::Tensor hidden = torch::gelu(seen("mlp_fc", mlp_fc(seen("ln_2", ln_2(x)))));
  return x + resid_dropout(seen("mlp_proj", mlp_proj(hidden)));
}

void GptImpl::reset() {
  const GptConfig& c = config_;
  wte = register_module("wte", nn::Embedding(c.vocab_size, c.n_embd));
  wpe = register_module("wpe", nn::Embedding(c.block_size, c.n_embd));
  drop = register_module("drop", nn::Dropout(c.dropout));
  h = register_module("h", nn::ModuleList());
  for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(GptBlock(c));
  ln_f = register_module("ln_f", layer_norm(c.n_embd));
  torch::NoGradGuard no_grad;
  nn::init::normal_(wte->weight, 0.0, 0.02);
  nn::init::normal_(wpe->weight, 0.0, 0.02);
}

torch::Tensor GptImpl::forward(torch::Tensor tokens) {
  const int64_t t = tokens.size(1);
  TORCH_CHECK(t <= config_.block_size, "gpt_tiny: a sequence of ", t,
              " tokens is longer than its block size ", config_.block_size);
  const torch::Tensor pos =
      torch::arange(t, torch::TensorOptions().dtype(torch::kLong).device(tokens.device()));
  torch::Tensor x = drop(seen("wte", wte(tokens)) + seen("wpe", wpe(pos)));
  for (size_t i = 0; i < h->size(); ++i) x = h[i]->as<GptBlock>()->forward(x);
  x = seen("ln_f", ln_f(x));
  // The tied output projection: the token embedding's weight, used a second time.
  const torch::Tensor logits = torch::nn::functional::linear(x, wte->weight);
  return seen("lm_head", logits).transpose(1, 2);
}

}  // namespace ddpbench::scenarios::models
