// zero_gradients.cpp — see zero_gradients.h.
#include "modes/common/zero_gradients.h"

#include <torch/version.h>

namespace ddpbench::modes {

void zero_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) zero_gradients(group.params());
}

void zero_gradients(std::vector<at::Tensor> parameters) {
  for (at::Tensor& p : parameters) {
    at::Tensor& grad = p.mutable_grad();
    if (!grad.defined()) continue;
#if TORCH_VERSION_MAJOR >= 2
    grad.reset();  // zero_grad(set_to_none=true), without its detach_() first
#else
    if (grad.grad_fn()) {
      grad = grad.detach();
    } else {
      grad.requires_grad_(false);
    }
    grad.zero_();
#endif
  }
}

}  // namespace ddpbench::modes
