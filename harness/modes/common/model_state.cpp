// model_state.cpp — see model_state.h.
#include "modes/common/model_state.h"

#include <torch/nn/module.h>
#include <torch/serialize.h>
#include <torch/utils.h>

namespace ddpbench::modes {

at::Tensor host_copy(const at::Tensor& t) {
  // to(kCPU) already copies from a device; on the CPU it would alias, so clone.
  return t.device().is_cpu() ? t.detach().clone() : t.detach().to(at::kCPU);
}

NamedTensors capture_state(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    out.emplace_back(p.key(), host_copy(p.value()));
  }
  for (const auto& b : module.named_buffers(/*recurse=*/true)) {
    out.emplace_back(b.key(), host_copy(b.value()));
  }
  return out;
}

std::vector<char> pickle_state(const NamedTensors& state) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, tensor] : state) dict.insert(name, tensor);
  return torch::pickle_save(c10::IValue(dict));
}

}  // namespace ddpbench::modes
