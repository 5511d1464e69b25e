// update_sensitivity.h — how far an adaptive optimizer's last update of a parameter moves per unit
// of its gradient, element by element: |d update / d gradient| of Adam's and AdamW's step, read
// off the state the step left. The lockstep updates check (training/lockstep.h) holds each
// element's update to its gradient's rounding level times this (Note [Updates of adaptive
// optimizers] in compare/tensor_diff.h): Adam divides a gradient by its own magnitude, so a
// gradient known to within rounding gives an update known to within far more.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch::optim {
class Optimizer;
}

namespace ddpbench::scenarios {

// |du/dg| of `parameter`'s last step in `optimizer`, as a float64 tensor on the host shaped like
// it, `gradient` being the gradient that step took (after clipping and unscaling). With k the
// state's step, m and v the moments it left, b1, b2, lr and eps the group's, c1 = 1 - b1^k and
// c2 = 1 - b2^k, the step is u = lr / c1 * m / D with D = sqrt(v) / sqrt(c2) + eps, m = b1 m' +
// (1 - b1) g and v = b2 v' + (1 - b2) g^2, so
//   du/dg = lr / c1 * ((1 - b1) / D - m * (1 - b2) * g / (sqrt(c2) * sqrt(v) * D^2)),
// the second term 0 where v is 0 (AdamW's decay of the parameter does not depend on g; Adam's
// weight decay adds weight_decay x `before`, the parameter the step started from, to g).
// Undefined where the update is linear in the gradient (SGD: its rounding stays the gradient's
// relative size) or the optimizer holds no state for `parameter` (no step yet).
at::Tensor update_sensitivity(torch::optim::Optimizer& optimizer, const at::Tensor& parameter,
                              const at::Tensor& gradient, const at::Tensor& before);

}  // namespace ddpbench::scenarios
