// float_units.h — units in the last place, as the rounding floor's nudged twin uses them (Note
// [Mixed precision free-running], training/floor_measurement.h): how far a reordered sum can move
// an entry.
#pragma once

#include <ATen/core/Tensor.h>

namespace ddpbench::modes {

// One unit in the last place of each entry of `x` (>= 0) in its own dtype (float32 or float64),
// 0 where x is 0: the spacing of floats around it, 2^(e - digits) for x = m 2^e, m in [0.5, 1).
at::Tensor unit_in_last_place(const at::Tensor& x);

}  // namespace ddpbench::modes
