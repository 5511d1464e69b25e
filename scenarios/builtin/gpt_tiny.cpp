// gpt_tiny.cpp — scenario `gpt_tiny`: the recipe most data-parallel training runs today, on a
// model small enough for the suites: nanoGPT's decoder-only transformer (models/gpt_net.h: 2
// layers, 2 heads, width 32, 16 positions, a 64-token vocabulary, dropout 0.0 as nanoGPT
// pretrains, the output
// projection tied to the token embedding) predicting the next token of synthetic strided
// sequences (data/synthetic_tokens.h), with nanoGPT's train.py recipe: AdamW(betas=(0.9, 0.95),
// weight_decay=0.1) over two parameter groups (no weight decay on 1-D tensors), a linear warmup
// then cosine decay to a tenth of the rate, clip_grad_norm_(1.0), two accumulation micro-steps.
// Mixed precision stays off by default (bf16 autocast on the CPU is slow and judged apart:
// --amp bf16).
#include <torch/utils.h>

#include "data/synthetic_tokens.h"
#include "scenarios/models/gpt_net.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec gpt_tiny_scenario() {
  ScenarioSpec s;
  s.name = "gpt_tiny";
  s.summary =
      "nanoGPT-style transformer (tied embeddings), AdamW + no-decay group, warmup+cosine, "
      "clip 1.0";
  s.model_name = "nanoGPT (2 layers x 32, tied)";
  s.dataset_name = "synthetic token sequences (next-token prediction)";
  s.global_batch = 8;
  s.steps = 20;
  s.seed = 0;
  s.loss = LossKind::kCrossEntropy;
  s.accumulation_steps = 2;
  OptimizerSpec& o = s.optimizer;
  o.kind = OptimizerKind::kAdamW;
  o.lr = 1e-3;
  o.beta1 = 0.9;
  o.beta2 = 0.95;
  o.weight_decay = 0.1;
  o.no_decay = {"1d"};
  o.schedule.kind = ScheduleKind::kWarmupCosine;
  o.schedule.warmup_steps = 2;
  o.schedule.decay_steps = 20;
  o.schedule.min_lr = 1e-4;
  s.clip_grad_norm = 1.0;
  s.torch_oracle_model = "gpt_tiny";
  s.tied_parameters = {"wte.weight"};  // also the output projection (models/gpt_net.h)
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    // nanoGPT's pretraining setting ("for pretraining 0 is good"): the dropout modules are there
    // and draw nothing.
    models::GptConfig config;
    config.dropout = 0.0;
    return torch::nn::AnyModule(models::Gpt(config));
  };
  s.build_dataset = [](const BuildRequest& request) -> std::shared_ptr<const data::Dataset> {
    return std::make_shared<data::SyntheticTokens>(data::SyntheticTokensOptions{}, request.seed);
  };
  // Held out: sequences keyed past the training split's.
  s.build_eval_dataset = [](const BuildRequest& request) {
    EvalSet out;
    data::SyntheticTokensOptions options;
    options.size = 512;
    options.first_key = data::SyntheticTokensOptions{}.size;
    out.dataset = std::make_shared<data::SyntheticTokens>(options, request.seed);
    return out;
  };
  s.eval_size = 64;
  return s;
}

}  // namespace ddpbench::scenarios
