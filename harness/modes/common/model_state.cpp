// model_state.cpp — see model_state.h.
#include "modes/common/model_state.h"

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

std::vector<char> pickle_state(const NamedTensors& state) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : state) dict.insert(name, tensor);
  return torch::pickle_save(c10::IValue(dict));
}

}  // namespace ddpbench::modes
