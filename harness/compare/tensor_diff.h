// tensor_diff.h — the tolerance model (Note [Tolerance model] in docs/ARCHITECTURE.md): |got - ref|
// <= atol + rtol * |ref| elementwise, reporting max |got - ref|, max relative error and how many
// elements violate it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

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
  // verdict's measure, reports/run/verdict.h); infinite for a shape mismatch or a non-finite value.
  double max_ratio = 0.0;
  double ref_max_abs = 0.0;  // max |ref| (with `magnitude`: max of max(|ref|, magnitude))
  bool shape_mismatch = false;
};

// With `magnitude` (ref's shape), each element's rtol scales with max(|ref|, magnitude) instead of
// |ref| (Note [Parameters judged by what moved them], compare/mode_comparison.h).
TensorDiff diff_tensors(const at::Tensor& got, const at::Tensor& ref, const Tolerance& tol,
                        const at::Tensor& magnitude = {});

// Note [Gradients at rounding level]: a gradient can be a sum that cancels to rounding noise. The
// bias of a BatchNorm whose output goes through a 1x1 convolution into another BatchNorm has
// gradient 0 in exact arithmetic (the next BatchNorm's mean removes a per-channel shift), as has
// the key bias of attention (softmax ignores a shift of every logit of a query); float arithmetic
// leaves values near eps x the step's largest gradient. Measured on torchvision's mobilenet_v2
// (float32, batch 12): 17 such biases at 6e-10..5e-8 of the largest gradient, which DDP's
// average over 3 ranks changes by up to 4.3 eps of the largest gradient after 3 steps, and
// BatchNorm weights of 2e-5 of it whose sums cancel partly, changed by 1.8e-4 of their own size
// (0.03 eps of the largest gradient). Judged against its own maximum alone,
// such a tensor FAILs on summation order. So a tensor's error is judged like assertEqual's
// atol + rtol: within the check's limit when max |got - ref| <= max(limit x own maximum, level),
// level = kRoundingUlps x eps(dtype) x the step's largest |gradient| (or update). The price: a
// fault of relative size f is seen only on tensors whose maximum exceeds level / f (f = 1e-4 / 3:
// 5.7% of the largest gradient in float32, 1e-10 in float64); below that, rounding hides it.
// An adaptive optimizer (Adam) turns a gradient element at rounding level into an update of
// +-lr with the noise's sign, so the updates check leaves out the elements whose reference
// gradient is below the level (training/lockstep.cpp).
constexpr double kRoundingUlps = 16;

struct RoundingLevel {
  double level = 0.0;  // 0: no floor (every tensor judged against its own scale)
  double limit = 0.0;  // the check's limit on the normalized error
  // The smallest scale a tensor is judged against: level / limit.
  double scale_floor() const { return limit > 0 ? level / limit : 0.0; }
};

// The machine epsilon of a floating dtype: float64, float32, float16, else bfloat16's.
double epsilon_of(at::ScalarType dtype);

// kRoundingUlps x eps(dtype) x `largest`: the rounding level of a step whose largest |gradient|
// (or update) is `largest`, for a check whose limit is `limit`.
RoundingLevel rounding_level(double largest, at::ScalarType dtype, double limit);

// Scale-free gradient error: max |got - ref| / max(max |ref|, floor.scale_floor()) for full
// gradients, or the worst relative deviation of (sum/L1, L1, L2, max) for [4] fingerprints (see
// modes/gradient_record.h), each scale at least floor.scale_floor().
double normalized_gradient_error(const at::Tensor& got, const at::Tensor& ref, bool fingerprint,
                                 const RoundingLevel& floor = {});

// The largest |entry| of a recorded gradient (max |g|, or a fingerprint's max entry).
double gradient_max_abs(const at::Tensor& ref, bool fingerprint);

// The rounding level of one step's recorded gradients (undefined ones, None, left out): none when
// the step has no gradient.
RoundingLevel step_rounding_level(const std::vector<at::Tensor>& gradients, bool fingerprint,
                                  double limit);

// Scale-free error of an optimizer update, from the parameters after the step (`got`, `ref`) and
// before it (`before`, the same for both): max |got - ref| / max |ref - before|, where each
// element's difference first loses 2 ulps of |ref| in the parameters' dtype — the rounding of
// p + update itself, which alone makes float32 updates of lr 1e-3 differ by 1e-4 of their size
// when the gradients agree to 1e-6 (measured on toy_cnn).
// The scale is at least floor.scale_floor(), as for gradients; `compared` (bool, optional) keeps
// only those elements (the others' gradients were at rounding level); `allowance` (optional,
// shaped like ref) is each element's further room, Note [Updates of adaptive optimizers].
double normalized_update_error(const at::Tensor& got, const at::Tensor& ref,
                               const at::Tensor& before, const RoundingLevel& floor = {},
                               const at::Tensor& compared = {}, const at::Tensor& allowance = {});

// Note [Updates of adaptive optimizers]: Adam divides each gradient element by its own running
// magnitude, so an element whose gradient is a few times the rounding level moves by about lr
// whatever its size, and rounding of that gradient moves its update by lr x eps / (|g| + eps)^2
// per unit: measured on gpt_tiny (AdamW, float32 lockstep, random tokens, world 2), a gradient of
// -3.8e-7 (1.5 x the level) that DDP's summation order moved by 6e-10 moved its update by
// 3.7e-5 of the step's largest against the check's limit of 2e-5, while the gradients passed. A
// gradient element is known to within the level (the gradients check's own room), so its update is
// known to within |du/dg| x the level (scenarios/optim/update_sensitivity.h): the updates check
// subtracts that from each element's difference. It matters only where |g| is within a few orders
// of the level: at |g| = 1e-3 of the largest gradient the room is 1e-10 of lr, so a wrong weight
// decay, rate or state still shows on every element that carries the step.

// max |ref - before|: the size of a reference update.
double update_max_abs(const at::Tensor& ref, const at::Tensor& before);

}  // namespace ddpbench::compare
