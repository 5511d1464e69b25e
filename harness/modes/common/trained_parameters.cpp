// trained_parameters.cpp — see trained_parameters.h.
#include "modes/common/trained_parameters.h"

#include <torch/nn/module.h>

#include <algorithm>
#include <stdexcept>

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

std::vector<std::string> parameter_names(const torch::nn::Module& module,
                                         const std::vector<at::Tensor>& parameters) {
  const auto named = module.named_parameters();
  std::vector<std::string> out;
  for (const at::Tensor& p : parameters) {
    const auto it = std::find_if(named.begin(), named.end(),
                                 [&](const auto& n) { return n.value().is_same(p); });
    if (it == named.end()) throw std::logic_error("parameter_names: a tensor not in the module");
    out.push_back(it->key());
  }
  return out;
}

}  // namespace ddpbench::modes
