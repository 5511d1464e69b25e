// trained_parameters.cpp — see trained_parameters.h.
#include "modes/common/trained_parameters.h"

#include <torch/nn/module.h>

namespace ddpbench::modes {

TrainedParameters trained_parameters(const torch::nn::Module& module) {
  TrainedParameters out;
  for (const auto& p : module.named_parameters()) {
    if (!p.value().requires_grad()) continue;
    bool seen = false;
    for (const auto& q : out.tensors) seen = seen || q.is_same(p.value());
    if (seen) continue;
    out.names.push_back(p.key());
    out.tensors.push_back(p.value());
  }
  return out;
}

}  // namespace ddpbench::modes
