// zero_stage.cpp — see zero_stage.h.
#include "modes/zero/zero_stage.h"

#include <ATen/ATen.h>

#include <limits>

namespace ddpbench::modes::zero {
namespace {

// The inf fault: an overflow in this rank's first gradient, before the reduction carries it to
// whoever holds that element (at stages 2 and 3 its owner alone).
void overflow(const at::Tensor& gradient) {
  if (gradient.numel() > 0) gradient.view(-1)[0].fill_(std::numeric_limits<double>::infinity());
}

}  // namespace

at::Tensor& gradient_or_zeros(at::Tensor& parameter) {
  at::Tensor& g = parameter.mutable_grad();
  if (!g.defined()) g = at::zeros_like(parameter);
  return g;
}

void GradientFaults::apply(int64_t index, const at::Tensor& gradient) const {
  if (index == grad_parameter) gradient.mul_(1.0 + eps);
  if (index == 0 && overflow_first) overflow(gradient);
}

}  // namespace ddpbench::modes::zero
