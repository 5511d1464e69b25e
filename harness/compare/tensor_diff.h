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
  // max |got - ref| / (atol + rtol * |ref|): <= 1 exactly when there are no violations (the
  // verdict's measure, reports/verdict.h); infinite for a shape mismatch or a non-finite value.
  double max_ratio = 0.0;
  double ref_max_abs = 0.0;  // max |ref|
  bool shape_mismatch = false;
};

TensorDiff diff_tensors(const at::Tensor& got, const at::Tensor& ref, const Tolerance& tol);

// Scale-free gradient error: max |got - ref| / max |ref| for full gradients, or the worst
// relative deviation of (sum/L1, L1, L2, max) for [4] fingerprints (see modes/gradient_record.h).
double normalized_gradient_error(const at::Tensor& got, const at::Tensor& ref, bool fingerprint);

// Scale-free error of an optimizer update, from the parameters after the step (`got`, `ref`) and
// before it (`before`, the same for both): max |got - ref| / max |ref - before|, where each
// element's difference first loses 2 ulps of |ref| in the parameters' dtype — the rounding of
// p + update itself, which alone makes float32 updates of lr 1e-3 differ by 1e-4 of their size
// when the gradients agree to 1e-6 (measured on toy_cnn).
double normalized_update_error(const at::Tensor& got, const at::Tensor& ref,
                               const at::Tensor& before);

}  // namespace ddpbench::compare
