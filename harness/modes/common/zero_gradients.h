// zero_gradients.h — what the linked libtorch's Optimizer::zero_grad() does by default, safe for
// gradients that are views (DDP's buckets): torch 2.x sets every .grad to None; 1.13 zeroes them
// in place, but its C++ zero_grad() also calls detach_() on each, which autograd refuses for a
// view, so here a gradient is only detached when it has a grad_fn (Python's zero_grad does the
// same).
#pragma once

#include <torch/optim/optimizer.h>

namespace ddpbench::modes {

void zero_gradients(torch::optim::Optimizer& optimizer);

}  // namespace ddpbench::modes
