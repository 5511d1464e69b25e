// ddp_agreement.cpp — see ddp_agreement.h.
#include "compare/ddp_agreement.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "compare/check_builder.h"
#include "compare/tensor_diff.h"

namespace ddpbench::compare {
namespace {

// No scenario declares zero apart from ddp: every differing item fails.
const std::vector<DivergenceRule> kNoDivergences;

// An item of two tensors. Bit for bit: error 1 when they differ at all, abs_diff the largest
// difference. Otherwise the scale-free error against `floor`, which is also the item's abs_diff
// (a passing kNormalized check's max_abs_diff is within its limit, reports/run/verdict.h).
Item tensor_item(const std::string& name, int64_t step, const at::Tensor& got,
                 const at::Tensor& ref, const AgreementRule& rule, bool fingerprint,
                 const RoundingLevel& floor) {
  const double apart = rule.bitwise ? 1.0 : INFINITY;
  if (got.defined() != ref.defined() || (got.defined() && got.sizes() != ref.sizes())) {
    return {name, step, INFINITY, INFINITY, apart};
  }
  // None on both (a parameter no rank used), or nothing to compare.
  if (!got.defined() || got.numel() == 0) return {name, step, 0.0, 0.0, 0.0};
  if (!rule.bitwise) {
    const double error = normalized_gradient_error(got, ref, fingerprint, floor);
    return {name, step, error, error, error};
  }
  const at::Tensor r = ref.to(at::kDouble);
  const double diff = (got.to(at::kDouble) - r).abs().max().item<double>();
  const double ref_max = r.abs().max().item<double>();
  const double abs_diff = std::isnan(diff) ? INFINITY : diff;
  const bool same = at::equal(got, ref);
  return {name, step, same ? 0.0 : std::max(abs_diff, 1e-300),
          ref_max > 0 ? abs_diff / ref_max : abs_diff, same ? 0.0 : 1.0};
}

}  // namespace

ModeComparison ddp_agreement(const ModeTrace& ddp, const ModeTrace& zero, const AgreementRule& rule,
                             const MeasuredFloors* floors) {
  // A floor's limit on the normalized scale (relative to `scale`); none for a bitwise rule.
  const auto limit_of = [&](reports::Stage check, int64_t step, const std::string& tensor,
                            double scale) {
    if (rule.bitwise || !(scale > 0)) return 0.0;
    return normalized_floor_limit(
        floors, floors == nullptr ? 0.0 : floors->get(check, step, tensor) / scale, rule.limit);
  };
  const Rule measure = rule.bitwise ? exact_rule() : normalized_rule(rule.limit);
  CheckBuilder check(reports::Stage::kMatchesDdp, measure, kNoDivergences);
  for (size_t s = 0; s < ddp.losses.size(); ++s) {
    const int64_t step = ddp.first_step + static_cast<int64_t>(s);
    const double r = ddp.losses[s];
    const double a = s < zero.losses.size() ? zero.losses[s] : NAN;
    const double diff = std::isnan(a - r) ? INFINITY : std::abs(a - r);
    const double rel = diff == 0 ? 0.0 : r != 0 ? diff / std::abs(r) : INFINITY;
    if (rule.bitwise) {
      const bool same = a == r;
      check.add({"loss", step, same ? 0.0 : std::max(diff, 1e-300), rel, same ? 0.0 : 1.0}, 0);
    } else {
      Item item{"loss", step, rel, rel, rel};
      item.floor_limit = limit_of(reports::Stage::kLoss, step, "loss", std::abs(r));
      check.add(item, 0);
    }
  }
  const auto n = ddp.param_names.size();
  for (size_t s = 0; s < ddp.gradients.size(); ++s) {
    const int64_t step = ddp.first_step + static_cast<int64_t>(s);
    // Note [Gradients at rounding level] (compare/tensor_diff.h).
    const RoundingLevel floor =
        step_rounding_level(ddp.gradients[s], rule.gradient_fingerprints, rule.limit);
    for (size_t i = 0; i < n && i < ddp.gradients[s].size(); ++i) {
      const at::Tensor got = s < zero.gradients.size() && i < zero.gradients[s].size()
                                 ? zero.gradients[s][i]
                                 : at::Tensor();
      Item item = tensor_item(ddp.param_names[i], step, got, ddp.gradients[s][i], rule,
                              rule.gradient_fingerprints, floor);
      if (!rule.bitwise) {
        item.floor_limit = gradient_floor_limit(floors, step, i, ddp.gradients[s][i],
                                                rule.gradient_fingerprints, floor);
      }
      check.add(item, 1 + static_cast<int64_t>(n - 1 - i));
    }
  }
  for (size_t i = 0; i < ddp.final_state.size(); ++i) {
    const auto& [name, r] = ddp.final_state[i];
    std::optional<at::Tensor> got;
    for (const auto& [other, t] : zero.final_state) {
      if (other == name) got = t;
    }
    Item item = tensor_item(name, -1, got.value_or(at::Tensor()), r, rule, false, {});
    if (r.numel() > 0) {
      item.floor_limit = limit_of(i < n ? reports::Stage::kParameters : reports::Stage::kBuffers,
                                  -1, name, r.detach().abs().max().item<double>());
    }
    check.add(item, static_cast<int64_t>(i));
  }
  ModeComparison out;
  reports::CheckRecord c = check.build();
  c.detail = rule.why;
  out.checks.push_back(std::move(c));
  std::optional<ItemOrder> first;
  check.offer_first_failure(first, out.first_divergence);
  return out;
}

}  // namespace ddpbench::compare
