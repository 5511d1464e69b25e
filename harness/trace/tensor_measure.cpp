// tensor_measure.cpp — see tensor_measure.h.
#include "trace/tensor_measure.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cfloat>
#include <cmath>
#include <cstring>

#include "compare/tensor_diff.h"
#include "modes/common/gradient_record.h"

namespace ddpbench::trace {
namespace {

using modes::TraceEntry;
using modes::TracePhase;
using reports::DiffClass;
using reports::TensorDifference;

// The spacing of `dtype`'s values at each element's magnitude (float64 tensors in and out).
at::Tensor ulp_of(const at::Tensor& magnitude, at::ScalarType dtype) {
  return at::exp2(at::floor(at::log2(magnitude.clamp_min(DBL_MIN)))) * compare::epsilon_of(dtype);
}

// Both sides in one form: a full tensor meets a fingerprint as its fingerprint.
std::pair<at::Tensor, at::Tensor> comparable(const TraceEntry& a, const TraceEntry& b) {
  if (a.fingerprint == b.fingerprint) return {a.value, b.value};
  return {a.fingerprint ? a.value : modes::fingerprint(a.value),
          b.fingerprint ? b.value : modes::fingerprint(b.value)};
}

}  // namespace

std::string key_of(const TraceEntry& e) {
  return fmt::format("{}|{}|{}|{}", e.step, modes::trace_phase_name(e.phase), e.rank, e.tensor);
}

bool same_bytes(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

void measure(const TraceEntry& ea, const TraceEntry& eb, double level, double limit,
             at::ScalarType run, const at::Tensor& allowance, TensorDifference& d) {
  const auto [a, b] = comparable(ea, eb);
  d.fingerprint = ea.fingerprint || eb.fingerprint;
  d.dtype = c10::toString(ea.value.scalar_type());
  d.limit = limit;
  if (same_bytes(a, b)) {
    d.cls = DiffClass::kIdentical;
    return;
  }
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) {
    d.cls = DiffClass::kDiverged;
    d.error = INFINITY;
    d.cause = fmt::format("its dtype or shape differs ({} [{}] against {} [{}])",
                          c10::toString(a.scalar_type()), fmt::join(a.sizes(), ", "),
                          c10::toString(b.scalar_type()), fmt::join(b.sizes(), ", "));
    return;
  }
  const at::Tensor da = a.to(at::kDouble), db = b.to(at::kDouble);
  const at::Tensor diff = (da - db).abs();
  const at::Tensor mag = at::maximum(da.abs(), db.abs());
  d.max_abs = diff.max().item<double>();
  const at::Tensor nonzero = mag > 0;
  d.max_rel = nonzero.any().item<bool>()
                  ? (diff.masked_select(nonzero) / mag.masked_select(nonzero)).max().item<double>()
                  : 0.0;
  // An integer buffer (num_batches_tracked) is counted in float32's ulps.
  const at::ScalarType dtype = d.fingerprint                  ? run
                               : ea.value.is_floating_point() ? ea.value.scalar_type()
                                                              : at::kFloat;
  const compare::RoundingLevel floor{level, limit};
  if (d.fingerprint) {
    d.error = std::max(compare::normalized_gradient_error(a, b, true, floor),
                       compare::normalized_gradient_error(b, a, true, floor));
  } else {
    d.ulps = (diff / ulp_of(mag, dtype)).max().item<double>();
    const at::Tensor judged = allowance.defined() ? (diff - allowance).clamp_min(0) : diff;
    d.error = judged.max().item<double>() / std::max(mag.max().item<double>(), floor.scale_floor());
  }
  if (!std::isfinite(d.error)) d.error = INFINITY;
  d.cls = d.error <= limit ? DiffClass::kRounding : DiffClass::kDiverged;
}

std::string origin_cause(const TraceEntry& e, const std::string& mode, const std::string& world) {
  switch (e.phase) {
    case TracePhase::kStart:
      return "the state training starts from differs: the model's initialisation (its random "
             "draws or init kernels) or the --resume state";
    case TracePhase::kForward:
      return fmt::format(
          "the operation that computes {}: every earlier output of the step and every parameter "
          "were identical, so the kernel itself computes differently (another convolution or "
          "matmul algorithm, another vectorisation or thread split)",
          e.tensor);
    case TracePhase::kLoss:
      return "the loss (or DDP's mean of it over the ranks): every forward output traced was "
             "identical";
    case TracePhase::kStepStart:
      return "the state the step started from (lockstep starts each step from the reference's)";
    case TracePhase::kLocalGradient:
      if (e.rank != 0) {
        return fmt::format(
            "rank {}'s forward or backward (the trace holds rank 0's forward only, and the loss "
            "and rank 0's were identical)",
            e.rank);
      }
      return "the backward kernels: the forward and the loss were identical";
    case TracePhase::kReducedGradient:
      if (mode == "single") return "the gradient's accumulation: its backward was identical";
      return fmt::format(
          "the reduction across the {} ranks or replicas (its summation order, algorithm or "
          "precision; the backend, engine or bucket layout), not measured: this trace holds no "
          "local gradient of its ranks or replicas but rank 0's, which was identical",
          world);
    case TracePhase::kUpdate:
    case TracePhase::kParameter:
    case TracePhase::kOptimizerState:
      return "the optimizer step: the gradients it applied were identical";
    case TracePhase::kBuffer:
      return "the buffer's update (BatchNorm's running statistics in the forward, or DDP's "
             "broadcast of them): the forward outputs were identical";
  }
  return "?";
}

// Note [Parameters judged by what moved them]'s twin for updates: an update is the parameter after
// the step minus before it, so each element carries the rounding of p + update, up to 2 ulps of
// |p| in the parameter's dtype (compare::normalized_update_error allows the same). Only for full
// updates whose parameters both traces hold whole.
at::Tensor update_allowance(const TraceEntry& e,
                            const std::unordered_map<std::string, const TraceEntry*>& in_a,
                            const std::unordered_map<std::string, const TraceEntry*>& in_b) {
  if (e.phase != TracePhase::kUpdate || e.fingerprint || !e.value.is_floating_point()) return {};
  TraceEntry parameter = e;
  parameter.phase = TracePhase::kParameter;
  const std::string key = key_of(parameter);
  const auto pa = in_a.find(key), pb = in_b.find(key);
  if (pa == in_a.end() || pb == in_b.end() || pa->second->fingerprint || pb->second->fingerprint ||
      pa->second->value.sizes() != e.value.sizes() ||
      pb->second->value.sizes() != e.value.sizes()) {
    return {};
  }
  const at::Tensor magnitude =
      at::maximum(pa->second->value.to(at::kDouble).abs(), pb->second->value.to(at::kDouble).abs());
  return 2 * ulp_of(magnitude, e.value.scalar_type());
}

}  // namespace ddpbench::trace
