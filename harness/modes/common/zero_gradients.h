// zero_gradients.h — what the linked libtorch's Optimizer::zero_grad() does by default, safe for
// gradients that are views (DDP's buckets): torch 2.x sets every .grad to None, 1.13 zeroes them
// in place, but both C++ zero_grad()s first call detach_() on each gradient, which autograd
// refuses for a view; here a gradient is only detached when it has a grad_fn (as Python's
// zero_grad does).
#pragma once

#include <torch/optim/optimizer.h>

namespace ddpbench::modes {

void zero_gradients(torch::optim::Optimizer& optimizer);
// The same for the gradients of `parameters` (the step loop's: the mode's module's, which under
// zero are more than its optimizer holds).
void zero_gradients(std::vector<at::Tensor> parameters);

}  // namespace ddpbench::modes
