// tensor_diff.cpp — see tensor_diff.h. Everything is computed in float64 on the host, so the
// comparison adds no rounding of its own and tensors from different devices (a CUDA mode against
// a host record) compare alike.
#include "compare/tensor_diff.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

namespace ddpbench::compare {
namespace {
constexpr double kTiny = 1e-30;

at::Tensor host_double(const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble); }

}  // namespace

double epsilon_of(at::ScalarType t) {
  return t == at::kDouble  ? 0x1p-52
         : t == at::kFloat ? 0x1p-23
         : t == at::kHalf  ? 0x1p-10
                           : 0x1p-7;  // bfloat16
}

RoundingLevel rounding_level(double largest, at::ScalarType dtype, double limit) {
  return {kRoundingUlps * epsilon_of(dtype) * largest, limit};
}

double gradient_max_abs(const at::Tensor& ref, bool fingerprint) {
  if (!ref.defined() || ref.numel() == 0) return 0.0;
  return fingerprint ? std::abs(ref[3].item<double>()) : ref.abs().max().item<double>();
}

RoundingLevel step_rounding_level(const std::vector<at::Tensor>& gradients, bool fingerprint,
                                  double limit) {
  double largest = 0.0;
  const at::Tensor* typed = nullptr;  // a gradient the step has (None where no rank used one)
  for (const at::Tensor& g : gradients) {
    largest = std::max(largest, gradient_max_abs(g, fingerprint));
    if (typed == nullptr && g.defined()) typed = &g;
  }
  return typed == nullptr ? RoundingLevel{} : rounding_level(largest, typed->scalar_type(), limit);
}

double update_max_abs(const at::Tensor& ref, const at::Tensor& before) {
  if (ref.numel() == 0 || !ref.sizes().equals(before.sizes())) return 0.0;
  return (host_double(ref) - host_double(before)).abs().max().item<double>();
}

TensorDiff diff_tensors(const at::Tensor& got, const at::Tensor& ref, const Tolerance& tol,
                        const at::Tensor& magnitude) {
  TensorDiff d;
  if (!got.sizes().equals(ref.sizes())) {
    d.shape_mismatch = true;
    d.violations = std::max<int64_t>(1, ref.numel());
    d.max_abs = std::numeric_limits<double>::infinity();
    d.max_ratio = std::numeric_limits<double>::infinity();
    return d;
  }
  if (ref.numel() == 0) return d;
  const at::Tensor a = host_double(got);
  const at::Tensor b = host_double(ref);
  const at::Tensor diff = (a - b).abs();
  const at::Tensor scale = magnitude.defined() && magnitude.sizes().equals(ref.sizes())
                               ? at::maximum(b.abs(), host_double(magnitude))
                               : b.abs();
  const at::Tensor bound = tol.atol + tol.rtol * scale;
  // NaN compares false everywhere, so count "not within bound" rather than "above bound".
  d.violations = diff.le(bound).logical_not().sum().item<int64_t>();
  d.max_abs = diff.max().item<double>();
  d.ref_max_abs = scale.max().item<double>();
  // An element with a zero bound (atol 0, ref 0) is within it only when equal.
  const at::Tensor ratio = at::where(diff.eq(0), at::zeros_like(diff), diff / bound);
  d.max_ratio = ratio.max().item<double>();
  if (std::isnan(d.max_abs) || !a.isfinite().all().item<bool>()) {
    d.max_abs = std::numeric_limits<double>::infinity();
    d.max_ratio = std::numeric_limits<double>::infinity();
  }
  if (std::isnan(d.max_ratio)) d.max_ratio = std::numeric_limits<double>::infinity();
  const at::Tensor nonzero = b.ne(0);
  if (nonzero.any().item<bool>()) {
    d.max_rel = (diff.masked_select(nonzero) / b.abs().masked_select(nonzero)).max().item<double>();
  }
  return d;
}

double normalized_gradient_error(const at::Tensor& got, const at::Tensor& ref, bool fingerprint,
                                 const RoundingLevel& floor) {
  if (!got.defined() || !ref.defined()) {
    return got.defined() == ref.defined() ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (!got.sizes().equals(ref.sizes())) return std::numeric_limits<double>::infinity();
  const at::Tensor a = host_double(got);
  const at::Tensor b = host_double(ref);
  if (!a.isfinite().all().item<bool>()) return std::numeric_limits<double>::infinity();
  if (!fingerprint) {
    const double scale = std::max({b.abs().max().item<double>(), floor.scale_floor(), kTiny});
    return (a - b).abs().max().item<double>() / scale;
  }
  // Fingerprint = (sum, L1, L2, max|g|); a sum can cancel to ~0, so judge it against L1.
  const double l1 = std::max({b[1].item<double>(), floor.scale_floor(), kTiny});
  const double l2 = std::max({b[2].item<double>(), floor.scale_floor(), kTiny});
  const double mx = std::max({b[3].item<double>(), floor.scale_floor(), kTiny});
  return std::max({std::abs(a[0].item<double>() - b[0].item<double>()) / l1,
                   std::abs(a[1].item<double>() - b[1].item<double>()) / l1,
                   std::abs(a[2].item<double>() - b[2].item<double>()) / l2,
                   std::abs(a[3].item<double>() - b[3].item<double>()) / mx});
}

double normalized_update_error(const at::Tensor& got, const at::Tensor& ref,
                               const at::Tensor& before, const RoundingLevel& floor,
                               const at::Tensor& compared, const at::Tensor& allowance) {
  if (!got.sizes().equals(ref.sizes()) || !ref.sizes().equals(before.sizes())) {
    return std::numeric_limits<double>::infinity();
  }
  if (ref.numel() == 0) return 0.0;
  const double eps = epsilon_of(ref.scalar_type());
  const at::Tensor a = host_double(got);
  const at::Tensor b = host_double(ref);
  if (!a.isfinite().all().item<bool>()) return std::numeric_limits<double>::infinity();
  at::Tensor excess = (a - b).abs() - 2 * eps * b.abs();
  if (allowance.defined()) excess = excess - allowance.to(at::kCPU, at::kDouble);
  excess = excess.clamp_min(0);
  if (compared.defined()) excess = excess * compared.to(at::kCPU, at::kDouble);
  const double own = (b - host_double(before)).abs().max().item<double>();
  return excess.max().item<double>() / std::max({own, floor.scale_floor(), kTiny});
}

}  // namespace ddpbench::compare
