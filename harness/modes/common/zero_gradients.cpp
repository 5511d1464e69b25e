// zero_gradients.cpp — see zero_gradients.h.
#include "modes/common/zero_gradients.h"

#include <torch/version.h>

namespace ddpbench::modes {

void zero_gradients(torch::optim::Optimizer& optimizer) {
#if TORCH_VERSION_MAJOR >= 2
  optimizer.zero_grad();  // set_to_none=true: no in-place write, views are fine
#else
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      at::Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (grad.grad_fn()) {
        grad = grad.detach();
      } else {
        grad.requires_grad_(false);
      }
      grad.zero_();
    }
  }
#endif
}

}  // namespace ddpbench::modes
