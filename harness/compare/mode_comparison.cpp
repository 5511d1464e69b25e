// mode_comparison.cpp — see mode_comparison.h.
#include "compare/mode_comparison.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <limits>
#include <optional>
#include <regex>
#include <tuple>

namespace ddpbench::compare {
namespace {

// The order in which a step computes what the checks compare: the forward's loss and buffers, the
// gradients (in backward order), the optimizer's updates. Final-state items come after every step.
enum class Stage { kLoss = 0, kBuffers = 1, kGradients = 2, kUpdates = 3 };

// Where an item sits in a run: earlier items sort first.
struct ItemOrder {
  int64_t step = 0;  // final-state items: after every step
  Stage stage = Stage::kLoss;
  int64_t position = 0;  // within the stage
  bool operator<(const ItemOrder& o) const {
    return std::tie(step, stage, position) < std::tie(o.step, o.stage, o.position);
  }
};

int64_t step_order(int64_t step) {
  return step < 0 ? std::numeric_limits<int64_t>::max() : step;
}

// Accumulates per-item results into one check. It keeps the worst item of each kind (failing,
// divergent, any), reports the worst one of the kind that decides the status, and remembers the
// earliest failing item for the first divergence.
class CheckBuilder {
 public:
  CheckBuilder(std::string name, Stage stage, const std::vector<DivergenceRule>& rules)
      : name_(std::move(name)), stage_(stage), rules_(rules) {}

  void add(const std::string& tensor, int64_t step, double abs_diff, double rel_diff, bool ok,
           int64_t position = 0) {
    ++items_;
    const reports::CheckRecord item{"", "", abs_diff, rel_diff, tensor, step, ""};
    keep_worse(worst_any_, item);
    if (ok) return;
    if (const DivergenceRule* rule = match(tensor)) {
      ++divergent_;
      reason_ = rule->reason;
      keep_worse(worst_divergent_, item);
      return;
    }
    ++failures_;
    keep_worse(worst_failure_, item);
    const ItemOrder order{step_order(step), stage_, position};
    if (failures_ == 1 || order < first_order_) {
      first_order_ = order;
      first_failure_ = item;
    }
  }

  reports::CheckRecord build(const std::string& tolerance_text) {
    tolerance_text_ = tolerance_text;
    reports::CheckRecord c;
    if (failures_ > 0) {
      c = worst_failure_;
      c.status = "fail";
      c.detail = fmt::format("{} of {} items outside {}", failures_, items_, tolerance_text);
    } else if (divergent_ > 0) {
      c = worst_divergent_;
      c.status = "expected_divergence";
      c.detail = fmt::format("{} of {} items differ beyond {}: {}", divergent_, items_,
                             tolerance_text, reason_);
    } else {
      c = worst_any_;
      c.status = "pass";
      c.detail = fmt::format("{} items within {}", items_, tolerance_text);
    }
    c.name = name_;
    return c;
  }

  int64_t items() const { return items_; }

  // Keeps this check's earliest failure in `first` when it is earlier than what `first` holds.
  void offer_first_failure(std::optional<ItemOrder>& order, reports::DivergenceRecord& first) const {
    if (failures_ == 0 || (order && !(first_order_ < *order))) return;
    order = first_order_;
    first.stage = name_;
    first.step = first_failure_.step;
    first.tensor = first_failure_.tensor;
    first.error = first_failure_.max_abs_diff;
    first.measure = tolerance_text_;
  }

 private:
  static void keep_worse(reports::CheckRecord& keep, const reports::CheckRecord& item) {
    if (keep.tensor.empty() || item.max_abs_diff > keep.max_abs_diff) keep = item;
  }

  const DivergenceRule* match(const std::string& tensor) const {
    for (const auto& r : rules_) {
      if (std::regex_search(tensor, std::regex(r.pattern))) return &r;
    }
    return nullptr;
  }

  std::string name_;
  Stage stage_;
  const std::vector<DivergenceRule>& rules_;
  reports::CheckRecord worst_any_, worst_divergent_, worst_failure_, first_failure_;
  ItemOrder first_order_;
  int64_t items_ = 0, failures_ = 0, divergent_ = 0;
  std::string reason_, tolerance_text_;
};

std::string tolerance_text(const Tolerance& t) {
  return fmt::format("atol {:g} + rtol {:g} * |ref|", t.atol, t.rtol);
}

void compare_losses(const ModeTrace& ref, const ModeTrace& got, const ComparisonPolicy& p,
                    CheckBuilder& b) {
  for (size_t s = 0; s < ref.losses.size(); ++s) {
    const double a =
        s < got.losses.size() ? got.losses[s] : std::numeric_limits<double>::quiet_NaN();
    const double r = ref.losses[s];
    const double diff = std::abs(a - r);
    const bool ok = diff <= p.state.atol + p.state.rtol * std::abs(r);
    b.add("loss", ref.first_step + static_cast<int64_t>(s), std::isnan(diff) ? INFINITY : diff,
          r != 0 ? diff / std::abs(r) : 0.0, ok);
  }
}

// Backward produces gradients roughly in reverse registration order (the order DDP's reducer
// assumes for its first buckets), so the last parameter's gradient is the first one computed.
void compare_gradients(const ModeTrace& ref, const ModeTrace& got, const ComparisonPolicy& p,
                       CheckBuilder& b) {
  const auto n = static_cast<int64_t>(ref.param_names.size());
  for (size_t s = 0; s < ref.gradients.size(); ++s) {
    for (int64_t i = n - 1; i >= 0; --i) {
      const auto k = static_cast<size_t>(i);
      const at::Tensor& r = ref.gradients[s][k];
      const at::Tensor g = s < got.gradients.size() && k < got.gradients[s].size()
                               ? got.gradients[s][k]
                               : at::Tensor();
      const double err = normalized_gradient_error(g, r, p.gradient_fingerprints);
      b.add(ref.param_names[k], ref.first_step + static_cast<int64_t>(s), err, err,
            err <= p.gradient_tolerance, n - 1 - i);
    }
  }
}

// Lockstep: every step's updates and buffers, recorded by the driver from the same start state.
void compare_lockstep_state(const ModeTrace& got, const ComparisonPolicy& p, CheckBuilder& updates,
                            CheckBuilder& buffers) {
  // A lockstep run that recorded nothing must not pass by having nothing to compare.
  if (got.state_diffs.empty()) {
    updates.add("(no lockstep state recorded)", -1, INFINITY, INFINITY, false);
  }
  int64_t position = 0;
  for (const StateDiff& d : got.state_diffs) {
    if (d.buffer) {
      buffers.add(d.tensor, d.step, d.error, d.max_rel, d.violations == 0, position++);
    } else {
      updates.add(d.tensor, d.step, d.error, d.max_rel, d.error <= p.gradient_tolerance,
                  position++);
    }
  }
}

// Free-running: the final parameters (first `param_names.size()` entries) and buffers.
void compare_final_state(const ModeTrace& ref, const ModeTrace& got, const ComparisonPolicy& p,
                         CheckBuilder& params, CheckBuilder& buffers) {
  const size_t num_params = ref.param_names.size();
  for (size_t i = 0; i < ref.final_state.size(); ++i) {
    const auto& [name, r] = ref.final_state[i];
    at::Tensor g;
    for (const auto& [n, t] : got.final_state) {
      if (n == name) g = t;
    }
    CheckBuilder& b = i < num_params ? params : buffers;
    const auto position = static_cast<int64_t>(i);
    if (!g.defined()) {
      b.add(name, -1, INFINITY, INFINITY, false, position);
      continue;
    }
    const TensorDiff d = diff_tensors(g, r, p.state);
    b.add(name, -1, d.max_abs, d.max_rel, d.violations == 0, position);
  }
}

}  // namespace

ModeComparison compare_modes(const ModeTrace& reference, const ModeTrace& candidate,
                             const ComparisonPolicy& policy) {
  const bool lockstep = candidate.comparison == "lockstep";
  const std::string gradient_text =
      fmt::format("normalized error {:g} ({} comparison)", policy.gradient_tolerance,
                  policy.gradient_fingerprints ? "fingerprint" : "full-tensor");
  CheckBuilder loss("loss", Stage::kLoss, policy.divergences);
  CheckBuilder gradients("gradients", Stage::kGradients, policy.divergences);
  CheckBuilder params(lockstep ? "updates" : "parameters", Stage::kUpdates, policy.divergences);
  CheckBuilder buffers("buffers", Stage::kBuffers, policy.divergences);
  compare_losses(reference, candidate, policy, loss);
  compare_gradients(reference, candidate, policy, gradients);
  if (lockstep) {
    compare_lockstep_state(candidate, policy, params, buffers);
  } else {
    compare_final_state(reference, candidate, policy, params, buffers);
  }
  const bool any_buffer = buffers.items() > 0;

  ModeComparison out;
  out.checks.push_back(loss.build(tolerance_text(policy.state)));
  out.checks.push_back(gradients.build(gradient_text));
  out.checks.push_back(params.build(lockstep ? fmt::format("normalized update error {:g}",
                                                           policy.gradient_tolerance)
                                             : tolerance_text(policy.state)));
  if (any_buffer) out.checks.push_back(buffers.build(tolerance_text(policy.state)));
  std::optional<ItemOrder> first;
  for (const CheckBuilder* b : {&loss, &buffers, &gradients, &params}) {
    b->offer_first_failure(first, out.first_divergence);
  }
  return out;
}

namespace {

// A check over the ranks: passes with `pass_detail` when step < 0, else fails at `step`.
reports::CheckRecord ranks_check(const char* name, int64_t step, const std::string& tensor,
                                 std::string pass_detail, std::string fail_detail) {
  reports::CheckRecord c;
  c.name = name;
  c.status = step < 0 ? "pass" : "fail";
  c.detail = step < 0 ? std::move(pass_detail) : std::move(fail_detail);
  if (step >= 0) {
    c.tensor = tensor;
    c.step = step;
  }
  return c;
}

}  // namespace

reports::CheckRecord rank_agreement_check(int64_t step, int64_t rank, const std::string& tensor) {
  return ranks_check(
      "ranks_bitwise_equal", step, tensor,
      "all ranks held bit-identical parameters after every step",
      fmt::format("rank {} differs from rank 0 in {} after step {}", rank, tensor, step));
}

void offer_ranks_check(const reports::CheckRecord& check, reports::DivergenceRecord& first) {
  if (check.status != "fail") return;
  if (!first.stage.empty() && !(step_order(check.step) < step_order(first.step))) return;
  first = {check.name, check.step, check.tensor, 0.0, check.detail};
}

reports::CheckRecord buffer_agreement_check(int64_t step, int64_t rank,
                                            const std::string& tensor) {
  return ranks_check("ranks_buffers_equal", step, tensor,
                     "every rank's forward started from rank 0's broadcast buffers",
                     fmt::format("rank {}'s forward at step {} did not start from rank 0's "
                                 "broadcast {}: its buffers were not synchronised",
                                 rank, step, tensor));
}

}  // namespace ddpbench::compare
