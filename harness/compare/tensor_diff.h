// tensor_diff.h — the tolerance model (docs/ARCHITECTURE.md, contract 6): |got - ref| <= atol +
// rtol * |ref| elementwise, reporting max |got - ref|, max relative error and how many elements
// violate it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ddpbench::compare {

struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

struct TensorDiff {
  double max_abs = 0.0;
  double max_rel = 0.0;    // max |got - ref| / |ref| over elements with ref != 0
  int64_t violations = 0;  // elements outside atol + rtol * |ref| (non-finite values count)
  bool shape_mismatch = false;
};

TensorDiff diff_tensors(const at::Tensor& got, const at::Tensor& ref, const Tolerance& tol);

// Scale-free gradient error: max |got - ref| / max |ref| for full gradients, or the worst
// relative deviation of (sum/L1, L1, L2, max) for [4] fingerprints (see modes/gradient_record.h).
double normalized_gradient_error(const at::Tensor& got, const at::Tensor& ref, bool fingerprint);

}  // namespace ddpbench::compare
