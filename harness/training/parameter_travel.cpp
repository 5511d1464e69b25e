// parameter_travel.cpp — see parameter_travel.h.
#include "training/parameter_travel.h"

#include <torch/torch.h>

namespace ddpbench::training {
namespace {

std::vector<at::Tensor> host_parameters(const torch::nn::Module& module) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : module.parameters())
    out.push_back(p.detach().to(at::kCPU, at::kDouble));
  return out;
}

}  // namespace

void ParameterTravel::before_step(const torch::nn::Module& module) {
  before_ = host_parameters(module);
  if (!initial_.empty()) return;
  for (const at::Tensor& p : before_) {
    initial_.push_back(p.abs());
    moved_.push_back(at::zeros_like(p));
  }
}

void ParameterTravel::after_step(const torch::nn::Module& module) {
  const std::vector<at::Tensor> after = host_parameters(module);
  for (size_t i = 0; i < after.size() && i < moved_.size(); ++i) {
    moved_[i] += (after[i] - before_[i]).abs();
  }
}

std::vector<at::Tensor> ParameterTravel::finish() const {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < initial_.size(); ++i) out.push_back(at::maximum(initial_[i], moved_[i]));
  return out;
}

}  // namespace ddpbench::training
