// gated_heads_net.cpp — see gated_heads_net.h.
#include "scenarios/models/gated_heads_net.h"

#include <torch/torch.h>

namespace ddpbench::scenarios::models {

void GatedHeadsImpl::reset() {
  trunk = register_module("trunk", torch::nn::Linear(kFeatures, 16));
  head_a = register_module("head_a", torch::nn::Linear(16, kOutputs));
  head_b = register_module("head_b", torch::nn::Linear(16, kOutputs));
}

torch::Tensor GatedHeadsImpl::forward(torch::Tensor x) {
  const torch::Tensor h = torch::tanh(seen("trunk", trunk(x.narrow(1, 0, kFeatures))));
  const torch::Tensor gate = x.select(1, kFeatures);
  // Each row through its head; a head no row selects is skipped, not fed an empty batch, so it
  // is absent from the autograd graph (an empty matmul would still give it a zero gradient).
  torch::Tensor out = torch::zeros({x.size(0), kOutputs}, h.options());
  const torch::Tensor rows_a = (gate == 0).nonzero().squeeze(1);
  const torch::Tensor rows_b = (gate != 0).nonzero().squeeze(1);
  if (rows_a.numel() > 0) out = out.index_copy(0, rows_a, head_a(h.index_select(0, rows_a)));
  if (rows_b.numel() > 0) out = out.index_copy(0, rows_b, head_b(h.index_select(0, rows_b)));
  return seen("heads", out);
}

}  // namespace ddpbench::scenarios::models
