// clip_grad_norm.cpp — see clip_grad_norm.h.
#include "scenarios/optim/clip_grad_norm.h"

#include <ATen/ATen.h>

namespace ddpbench::scenarios {

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return at::zeros({});
  std::vector<at::Tensor> norms;
  norms.reserve(grads.size());
  const at::Device device = grads.front().device();
  for (const auto& g : grads) norms.push_back(g.detach().norm(2).to(device));
  const at::Tensor total = at::stack(norms).norm(2);
  const at::Tensor coefficient = clip_coefficient(total, max_norm);
  for (auto& g : grads) g.detach().mul_(coefficient.to(g.device()));
  return total;
}

at::Tensor clip_coefficient(const at::Tensor& total_norm, double max_norm) {
  // The 1e-6 keeps the coefficient finite for an all-zero gradient, as PyTorch's does; Python's
  // `max_norm / tensor` is Tensor.__rdiv__, reciprocal() * max_norm, so the same bits here.
  return ((total_norm + 1e-6).reciprocal() * max_norm).clamp_max(1.0);
}

}  // namespace ddpbench::scenarios
