// model_state.cpp — see model_state.h.
#include "modes/model_state.h"

#include <torch/nn/module.h>
#include <torch/serialize.h>
#include <torch/utils.h>

namespace ddpbench::modes {

NamedTensors capture_state(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    out.emplace_back(p.key(), p.value().detach().clone());
  }
  for (const auto& b : module.named_buffers(/*recurse=*/true)) {
    out.emplace_back(b.key(), b.value().detach().clone());
  }
  return out;
}

void cast_floating_point(torch::nn::Module& module, at::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.is_floating_point() && p.scalar_type() != dtype) p.set_data(p.to(dtype));
  }
  for (auto& b : module.buffers()) {
    if (b.is_floating_point() && b.scalar_type() != dtype) b.set_data(b.to(dtype));
  }
}

std::vector<char> pickle_state(const NamedTensors& state) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : state) dict.insert(name, tensor);
  return torch::pickle_save(c10::IValue(dict));
}

}  // namespace ddpbench::modes
