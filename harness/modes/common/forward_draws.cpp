// forward_draws.cpp — see forward_draws.h.
#include "modes/common/forward_draws.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include "data/keyed_rng.h"
#include "scenarios/models/script_model.h"

namespace ddpbench::modes {

uint64_t forward_draw_seed(int64_t step, int64_t chunk) {
  // Kept below 2^63: Python's torch.manual_seed takes it as a signed integer, and the oracle
  // (reference/torch_ddp_oracle.py) seeds its ranks with the same numbers.
  const uint64_t h = data::mix64(data::mix64(static_cast<uint64_t>(step) + 0x5EEDULL) ^
                                 static_cast<uint64_t>(chunk));
  return h >> 1;
}

ForwardDraws::ForwardDraws(const torch::nn::Module& model) : lock_(std::make_unique<std::mutex>()) {
  const scenarios::models::ScriptModelFacts* facts = scenarios::models::script_model_facts(model);
  seeds_ = facts != nullptr && !facts->random_ops.empty();
  // A built-in model draws through its Dropout modules (gpt_tiny's).
  for (const auto& m : model.modules(/*include_self=*/true)) {
    const auto* dropout = dynamic_cast<const torch::nn::DropoutImpl*>(m.get());
    seeds_ = seeds_ || (dropout != nullptr && dropout->options.p() > 0);
  }
}

at::Tensor ForwardDraws::forward(torch::nn::AnyModule& model, const at::Tensor& input, int64_t step,
                                 int64_t chunk) {
  return forward([&] { return model.forward(input); }, input.device(), step, chunk);
}

at::Tensor ForwardDraws::forward(const std::function<at::Tensor()>& run, const at::Device& device,
                                 int64_t step, int64_t chunk) {
  if (!seeds_) return run();
  const std::lock_guard<std::mutex> hold(*lock_);
  at::Generator generator = at::globalContext().defaultGenerator(device);
  {
    const std::lock_guard<std::mutex> generator_lock(generator.mutex());
    generator.set_current_seed(forward_draw_seed(step, chunk));
  }
  return run();
}

}  // namespace ddpbench::modes
