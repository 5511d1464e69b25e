// float_units.cpp — see float_units.h.
#include "modes/common/float_units.h"

#include <ATen/ATen.h>

#include <tuple>

namespace ddpbench::modes {

at::Tensor unit_in_last_place(const at::Tensor& x) {
  const int digits = x.scalar_type() == at::kDouble ? 53 : 24;
  const at::Tensor exponent = std::get<1>(at::frexp(x));
  const at::Tensor ulp = at::ldexp(at::ones_like(x), exponent - digits);
  return at::where(x > 0, ulp, at::zeros_like(x));
}

}  // namespace ddpbench::modes
