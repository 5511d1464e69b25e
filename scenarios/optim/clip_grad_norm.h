// clip_grad_norm.h — torch.nn.utils.clip_grad_norm_(parameters, max_norm) with the 2-norm: the
// norm of the per-gradient norms, then every gradient scaled in place by
// min(1, max_norm / (total + 1e-6)). The step loop applies it to the gradients every mode trains
// with, so it is shared scaffolding like the optimizer, never part of a mode's gradient path.
// Written out here (not torch::nn::utils::clip_grad_norm_) so the arithmetic is the same on
// libtorch 1.13 and 2.x and no device value is read back (1.13's returns the norm as a double,
// which would synchronise a CUDA step).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace ddpbench::scenarios {

// Scales the defined gradients of `parameters` in place (a gradient that is a view of a DDP bucket
// stays one); returns the total norm before clipping, as a 0-dim tensor on the first gradient's
// device (0 when no parameter has a gradient).
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm);

// min(1, max_norm / (total_norm + 1e-6)) as clip_grad_norm_ computes it, a 0-dim tensor on
// total_norm's device: what a caller that assembles the total norm itself (zero stage 2, from the
// shards' owners) scales by, so that both clip by the same bits.
at::Tensor clip_coefficient(const at::Tensor& total_norm, double max_norm);

}  // namespace ddpbench::scenarios
