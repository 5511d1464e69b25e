// mode_comparison.cpp — see mode_comparison.h.
#include "compare/mode_comparison.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <limits>
#include <optional>

#include "compare/check_builder.h"
#include "reports/run/verdict.h"

namespace ddpbench::compare {
namespace {

// The loss of every step: |loss - ref| within atol + rtol * |ref|.
void compare_losses(const ModeTrace& ref, const ModeTrace& got, const ComparisonPolicy& p,
                    const MeasuredFloors* floors, CheckBuilder& b) {
  for (size_t s = 0; s < ref.losses.size(); ++s) {
    const double a =
        s < got.losses.size() ? got.losses[s] : std::numeric_limits<double>::quiet_NaN();
    const double r = ref.losses[s];
    const int64_t step = ref.first_step + static_cast<int64_t>(s);
    const double diff = std::isnan(a - r) ? INFINITY : std::abs(a - r);
    const double bound = p.state.atol + p.state.rtol * std::abs(r);
    const double ratio = diff == 0 ? 0.0 : bound > 0 ? diff / bound : INFINITY;
    Item item{"loss", step,
              diff,   r != 0 ? diff / std::abs(r) : 0.0,
              ratio,  std::isfinite(r) ? std::abs(r) : 0.0};
    item.floor_limit = tolerance_floor_limit(floors, reports::Stage::kLoss, step, "loss", ratio,
                                             diff, std::abs(r));
    b.add(item);
  }
}

// Backward produces gradients roughly in reverse registration order (the order DDP's reducer
// assumes for its first buckets), so the last parameter's gradient is the first one computed.
void compare_gradients(const ModeTrace& ref, const ModeTrace& got, const ComparisonPolicy& p,
                       const MeasuredFloors* floors, CheckBuilder& b) {
  const auto n = static_cast<int64_t>(ref.param_names.size());
  for (size_t s = 0; s < ref.gradients.size(); ++s) {
    const int64_t step = ref.first_step + static_cast<int64_t>(s);
    // Note [Gradients at rounding level] (compare/tensor_diff.h).
    const RoundingLevel level =
        step_rounding_level(ref.gradients[s], p.gradient_fingerprints, p.gradient_tolerance);
    for (int64_t i = n - 1; i >= 0; --i) {
      const auto k = static_cast<size_t>(i);
      const at::Tensor& r = ref.gradients[s][k];
      const at::Tensor g = s < got.gradients.size() && k < got.gradients[s].size()
                               ? got.gradients[s][k]
                               : at::Tensor();
      const double err = normalized_gradient_error(g, r, p.gradient_fingerprints, level);
      Item item{ref.param_names[k], step, err, err, err};
      item.floor_limit = gradient_floor_limit(floors, step, k, r, p.gradient_fingerprints, level);
      b.add(item, n - 1 - i);
    }
  }
}

// One check per tensor family a mode recorded per step, judged as its row says (Note [One row
// per check], reports/run/record_enums.h); kept in the table's order.
class FamilyChecks {
 public:
  explicit FamilyChecks(const ComparisonPolicy& p) : policy_(p) {}

  CheckBuilder& of(reports::Stage family) {
    for (CheckBuilder& builder : builders_) {
      if (builder.name() == family) return builder;
    }
    const Rule rule = reports::spec_of(family).judge == reports::StateJudge::kLikeState
                          ? tolerance_rule(policy_.state)
                          : normalized_rule(policy_.gradient_tolerance);
    return builders_.emplace_back(family, rule, policy_.divergences);
  }

  // Every family's builder: the updates (always recorded), then the others in kStageSpecs' order.
  std::vector<const CheckBuilder*> in_report_order() const {
    std::vector<const CheckBuilder*> out;
    const auto add = [&](reports::Stage family) {
      for (const CheckBuilder& builder : builders_) {
        if (builder.name() == family) out.push_back(&builder);
      }
    };
    add(reports::Stage::kUpdates);
    for (const reports::StageSpec& spec : reports::kStageSpecs) {
      if (spec.stage != reports::Stage::kUpdates) add(spec.stage);
    }
    return out;
  }

 private:
  const ComparisonPolicy& policy_;
  std::deque<CheckBuilder> builders_;  // stable addresses
};

// Lockstep: every step's recorded state, each item in its family's check; the optimizer state has
// no measured floor.
void compare_lockstep_state(const ModeTrace& got, const MeasuredFloors* floors,
                            FamilyChecks& families) {
  // A lockstep run that recorded nothing must not pass by having nothing to compare.
  CheckBuilder& updates = families.of(reports::Stage::kUpdates);
  if (got.state_diffs.empty()) {
    updates.add({"(no lockstep state recorded)", -1, INFINITY, INFINITY, INFINITY});
  }
  int64_t position = 0;
  for (const StateDiff& d : got.state_diffs) {
    CheckBuilder& b = families.of(d.family);
    if (reports::spec_of(d.family).judge == reports::StateJudge::kLikeState) {
      // A violation counted by the driver fails the item whatever its ratio says.
      const double ratio = d.violations > 0 ? std::max(d.ratio, std::nextafter(1.0, 2.0)) : d.ratio;
      Item item{d.tensor, d.step, d.error, d.max_rel, ratio, d.ref_max_abs};
      item.floor_limit =
          tolerance_floor_limit(floors, d.family, d.step, d.tensor, ratio, d.error, d.ref_max_abs);
      b.add(item, position++);
    } else {
      Item item{d.tensor, d.step, d.error, d.max_rel, d.error};
      if (floors != nullptr && d.family == reports::Stage::kUpdates) {
        item.floor_limit =
            normalized_floor_limit(floors, floors->get(d.family, d.step, d.tensor), b.limit());
      }
      b.add(item, position++);
    }
  }
}

// Free-running: the final parameters (first `param_names.size()` entries, Note [Parameters
// judged by what moved them]) and buffers.
void compare_final_state(const ModeTrace& ref, const ModeTrace& got, const ComparisonPolicy& p,
                         const MeasuredFloors* floors, CheckBuilder& params,
                         CheckBuilder& buffers) {
  const size_t num_params = ref.param_names.size();
  for (size_t i = 0; i < ref.final_state.size(); ++i) {
    const auto& [name, r] = ref.final_state[i];
    at::Tensor g;
    for (const auto& [n, t] : got.final_state) {
      if (n == name) g = t;
    }
    const bool parameter = i < num_params;
    CheckBuilder& b = parameter ? params : buffers;
    const auto position = static_cast<int64_t>(i);
    if (!g.defined()) {
      b.add({name, -1, INFINITY, INFINITY, INFINITY}, position);
      continue;
    }
    const at::Tensor travel =
        parameter && i < ref.parameter_travel.size() ? ref.parameter_travel[i] : at::Tensor();
    const TensorDiff d = diff_tensors(g, r, p.state, travel);
    const double ratio =
        d.violations > 0 ? std::max(d.max_ratio, std::nextafter(1.0, 2.0)) : d.max_ratio;
    Item item{name, -1, d.max_abs, d.max_rel, ratio, d.ref_max_abs};
    item.floor_limit = tolerance_floor_limit(
        floors, parameter ? reports::Stage::kParameters : reports::Stage::kBuffers, -1, name, ratio,
        d.max_abs, d.ref_max_abs);
    b.add(item, position);
  }
}

// (Note [Parted trajectories]) `floors` with the judged mode's own parting added: the first step
// after the first at which its loss or a gradient is past floors.cap of its scale.
MeasuredFloors with_own_parting(const ModeTrace& ref, const ModeTrace& got,
                                const ComparisonPolicy& p, const MeasuredFloors& floors) {
  MeasuredFloors own = floors;
  for (size_t s = 1; s < ref.losses.size() && s < got.losses.size(); ++s) {
    const int64_t step = ref.first_step + static_cast<int64_t>(s);
    if (!(std::abs(got.losses[s] - ref.losses[s]) <= floors.cap * std::abs(ref.losses[s]))) {
      own.set_parted(step, "the judged mode's loss moved past half the digits");
      return own;
    }
    if (s >= ref.gradients.size() || s >= got.gradients.size()) continue;
    const RoundingLevel level =
        step_rounding_level(ref.gradients[s], p.gradient_fingerprints, p.gradient_tolerance);
    for (size_t k = 0; k < ref.gradients[s].size() && k < got.gradients[s].size(); ++k) {
      const double err = normalized_gradient_error(got.gradients[s][k], ref.gradients[s][k],
                                                   p.gradient_fingerprints, level);
      if (!(err <= floors.cap)) {
        own.set_parted(step, "the judged mode's gradient of " + ref.param_names[k] +
                                 " moved past half the digits");
        return own;
      }
    }
  }
  return own;
}

}  // namespace

ModeComparison compare_modes(const ModeTrace& reference, const ModeTrace& candidate,
                             const ComparisonPolicy& policy, const MeasuredFloors* floors) {
  using reports::Stage;
  const bool lockstep = candidate.comparison == "lockstep";
  std::optional<MeasuredFloors> own;
  if (floors != nullptr && floors->judged_mode_parts && !lockstep) {
    own = with_own_parting(reference, candidate, policy, *floors);
    floors = &*own;
  }
  const Rule state = tolerance_rule(policy.state);
  const Rule gradient = normalized_rule(policy.gradient_tolerance);
  CheckBuilder loss(Stage::kLoss, state, policy.divergences);
  CheckBuilder gradients(Stage::kGradients, gradient, policy.divergences);
  compare_losses(reference, candidate, policy, floors, loss);
  compare_gradients(reference, candidate, policy, floors, gradients);
  ModeComparison out;
  out.checks.push_back(loss.build());
  out.checks.push_back(gradients.build());
  std::vector<const CheckBuilder*> offered{&loss, &gradients};
  FamilyChecks families(policy);
  CheckBuilder params(Stage::kParameters, state, policy.divergences);
  CheckBuilder buffers(Stage::kBuffers, state, policy.divergences);
  if (lockstep) {
    compare_lockstep_state(candidate, floors, families);
    for (const CheckBuilder* b : families.in_report_order()) {
      out.checks.push_back(b->build());
      offered.push_back(b);
    }
  } else {
    compare_final_state(reference, candidate, policy, floors, params, buffers);
    out.checks.push_back(params.build());
    if (buffers.items() > 0) out.checks.push_back(buffers.build());
    offered.insert(offered.end(), {&params, &buffers});
  }
  std::optional<ItemOrder> first;
  for (const CheckBuilder* b : offered) b->offer_first_failure(first, out.first_divergence);
  if (!reference.loss_scales.empty()) {
    out.checks.push_back(loss_scale_check(reference, candidate));
    offer_ranks_check(out.checks.back(), out.first_divergence);
  }
  return out;
}

namespace {

// A check over the ranks after each of `steps` steps (one exact comparison each): passes with
// `pass_detail` when step < 0, else fails at `step`.
reports::CheckRecord ranks_check(reports::Stage name, int64_t steps, int64_t step,
                                 const std::string& tensor, std::string pass_detail,
                                 std::string fail_detail) {
  reports::CheckRecord c;
  c.name = name;
  c.measure = reports::Measure::kExact;
  c.limit = 0;
  c.items = steps;
  c.outside = step < 0 ? 0 : 1;
  c.error = step < 0 ? 0.0 : 1.0;
  c.detail = step < 0 ? std::move(pass_detail) : std::move(fail_detail);
  if (step >= 0) {
    c.tensor = tensor;
    c.step = step;
  }
  c.status = reports::check_status(c, {});
  return c;
}

}  // namespace

reports::CheckRecord rank_agreement_check(int64_t steps, int64_t step, int64_t rank,
                                          const std::string& tensor) {
  return ranks_check(
      reports::Stage::kRanksBitwiseEqual, steps, step, tensor,
      "all ranks held bit-identical parameters after every step",
      fmt::format("rank {} differs from rank 0 in {} after step {}", rank, tensor, step));
}

reports::CheckRecord loss_scale_check(const ModeTrace& ref, const ModeTrace& got) {
  int64_t skipped = 0;
  for (const bool s : ref.skipped) skipped += s ? 1 : 0;
  const auto steps = static_cast<int64_t>(ref.loss_scales.size());
  for (size_t s = 0; s < ref.loss_scales.size(); ++s) {
    const bool have = s < got.loss_scales.size() && s < got.skipped.size();
    if (have && got.loss_scales[s] == ref.loss_scales[s] && got.skipped[s] == ref.skipped[s]) {
      continue;
    }
    const int64_t step = ref.first_step + static_cast<int64_t>(s);
    const std::string mine =
        have ? fmt::format("scale {:g}{}", got.loss_scales[s], got.skipped[s] ? ", skipped" : "")
             : std::string("no scale recorded");
    return ranks_check(reports::Stage::kLossScale, steps, step, "GradScaler", "",
                       fmt::format("step {}: {} against the reference's scale {:g}{}", step, mine,
                                   ref.loss_scales[s], ref.skipped[s] ? ", skipped" : ""));
  }
  return ranks_check(reports::Stage::kLossScale, steps, -1, "",
                     fmt::format("every step used the reference's GradScaler scale; {} of {} "
                                 "steps skipped, the same ones",
                                 skipped, steps),
                     "");
}

reports::CheckRecord scale_agreement_check(int64_t steps, int64_t step, int64_t rank, double scale,
                                           double rank0_scale) {
  return ranks_check(
      reports::Stage::kRanksScaleEqual, steps, step, "GradScaler",
      "every rank held rank 0's GradScaler scale after every step",
      fmt::format("rank {} held GradScaler scale {:g} after step {}, rank 0 {:g}: the ranks' "
                  "scales diverged",
                  rank, scale, step, rank0_scale));
}

void offer_ranks_check(const reports::CheckRecord& check, reports::DivergenceRecord& first) {
  if (check.status != reports::CheckStatus::kFail) return;
  if (first.stage != reports::Stage::kNone && !(step_order(check.step) < step_order(first.step))) {
    return;
  }
  first = {check.name, check.step, check.tensor, 0.0, check.detail};
}

reports::CheckRecord buffer_agreement_check(int64_t steps, int64_t step, int64_t rank,
                                            const std::string& tensor) {
  return ranks_check(reports::Stage::kRanksBuffersEqual, steps, step, tensor,
                     "every rank's forward started from the broadcast buffers (rank 0's; inside "
                     "Join the highest training rank's)",
                     fmt::format("rank {}'s forward at step {} did not start from the broadcast "
                                 "{}: its buffers were not synchronised",
                                 rank, step, tensor));
}

}  // namespace ddpbench::compare
