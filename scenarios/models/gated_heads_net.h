// gated_heads_net.h — a model with a branch that gets no gradient on some steps: a shared trunk
// (Linear 9 -> 16, tanh) and two heads (Linear 16 -> 10 each). The last input column is a gate:
// rows with gate 0 go through head_a, rows with gate 1 through head_b, and a head with no row in
// the batch is not run at all, so its parameters get no gradient (None, not zeros) — the case
// DDP's find_unused_parameters exists for. The gate is data, so every mode, replica and rank
// sees the same routing of the same sample.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {

class GatedHeadsImpl : public torch::nn::Cloneable<GatedHeadsImpl>, public ProbedModule {
 public:
  static constexpr int64_t kFeatures = 9;  // input columns before the gate
  static constexpr int64_t kOutputs = 10;

  GatedHeadsImpl() { reset(); }
  void reset() override;
  // x: [B, kFeatures + 1], the last column 0 or 1.
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Linear trunk{nullptr}, head_a{nullptr}, head_b{nullptr};
};
TORCH_MODULE(GatedHeads);

}  // namespace ddpbench::scenarios::models
