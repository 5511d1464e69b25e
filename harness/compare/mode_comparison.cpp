// mode_comparison.cpp — see mode_comparison.h.
#include "compare/mode_comparison.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <limits>
#include <regex>

namespace ddpbench::compare {
namespace {

// Accumulates per-item results into one check. It keeps the worst item of each kind (failing,
// divergent, any) and reports the worst one of the kind that decides the status.
class CheckBuilder {
 public:
  CheckBuilder(std::string name, const std::vector<DivergenceRule>& rules)
      : name_(std::move(name)), rules_(rules) {}

  void add(const std::string& tensor, int64_t step, double abs_diff, double rel_diff, bool ok) {
    ++items_;
    const reports::CheckRecord item{"", "", abs_diff, rel_diff, tensor, step, ""};
    keep_worse(worst_any_, item);
    if (ok) return;
    if (const DivergenceRule* rule = match(tensor)) {
      ++divergent_;
      reason_ = rule->reason;
      keep_worse(worst_divergent_, item);
    } else {
      ++failures_;
      keep_worse(worst_failure_, item);
    }
  }

  reports::CheckRecord build(const std::string& tolerance_text) const {
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
  const std::vector<DivergenceRule>& rules_;
  reports::CheckRecord worst_any_, worst_divergent_, worst_failure_;
  int64_t items_ = 0, failures_ = 0, divergent_ = 0;
  std::string reason_;
};

std::string tolerance_text(const Tolerance& t) {
  return fmt::format("atol {:g} + rtol {:g} * |ref|", t.atol, t.rtol);
}

reports::CheckRecord compare_losses(const ModeTrace& ref, const ModeTrace& got,
                                    const ComparisonPolicy& p) {
  CheckBuilder b("loss", p.divergences);
  for (size_t s = 0; s < ref.losses.size(); ++s) {
    const double a =
        s < got.losses.size() ? got.losses[s] : std::numeric_limits<double>::quiet_NaN();
    const double r = ref.losses[s];
    const double diff = std::abs(a - r);
    const bool ok = diff <= p.state.atol + p.state.rtol * std::abs(r);
    b.add("loss", static_cast<int64_t>(s), std::isnan(diff) ? INFINITY : diff,
          r != 0 ? diff / std::abs(r) : 0.0, ok);
  }
  return b.build(tolerance_text(p.state));
}

reports::CheckRecord compare_gradients(const ModeTrace& ref, const ModeTrace& got,
                                       const ComparisonPolicy& p) {
  CheckBuilder b("gradients", p.divergences);
  for (size_t s = 0; s < ref.gradients.size(); ++s) {
    for (size_t i = 0; i < ref.param_names.size(); ++i) {
      const at::Tensor& r = ref.gradients[s][i];
      const at::Tensor g = s < got.gradients.size() && i < got.gradients[s].size()
                               ? got.gradients[s][i]
                               : at::Tensor();
      const double err = normalized_gradient_error(g, r, p.gradient_fingerprints);
      b.add(ref.param_names[i], static_cast<int64_t>(s), err, err, err <= p.gradient_tolerance);
    }
  }
  return b.build(fmt::format("normalized error {:g} ({} comparison)", p.gradient_tolerance,
                             p.gradient_fingerprints ? "fingerprint" : "full-tensor"));
}

std::vector<reports::CheckRecord> compare_state(const ModeTrace& ref, const ModeTrace& got,
                                                const ComparisonPolicy& p) {
  CheckBuilder params("parameters", p.divergences);
  CheckBuilder buffers("buffers", p.divergences);
  const size_t num_params = ref.param_names.size();
  if (got.comparison == "lockstep") {
    bool any_buffer = false;
    // A lockstep run that recorded nothing must not pass by having nothing to compare.
    if (got.state_diffs.empty()) params.add("(no lockstep state recorded)", -1, INFINITY, INFINITY, false);
    for (const StateDiff& d : got.state_diffs) {
      (d.buffer ? buffers : params).add(d.tensor, d.step, d.max_abs, d.max_rel, d.violations == 0);
      any_buffer = any_buffer || d.buffer;
    }
    std::vector<reports::CheckRecord> out{params.build(tolerance_text(p.state))};
    if (any_buffer) out.push_back(buffers.build(tolerance_text(p.state)));
    return out;
  }
  for (size_t i = 0; i < ref.final_state.size(); ++i) {
    const auto& [name, r] = ref.final_state[i];
    at::Tensor g;
    for (const auto& [n, t] : got.final_state) {
      if (n == name) g = t;
    }
    CheckBuilder& b = i < num_params ? params : buffers;
    if (!g.defined()) {
      b.add(name, -1, INFINITY, INFINITY, false);
      continue;
    }
    const TensorDiff d = diff_tensors(g, r, p.state);
    b.add(name, -1, d.max_abs, d.max_rel, d.violations == 0);
  }
  std::vector<reports::CheckRecord> out{params.build(tolerance_text(p.state))};
  if (ref.final_state.size() > num_params) out.push_back(buffers.build(tolerance_text(p.state)));
  return out;
}

}  // namespace

std::vector<reports::CheckRecord> compare_modes(const ModeTrace& reference,
                                                const ModeTrace& candidate,
                                                const ComparisonPolicy& policy) {
  std::vector<reports::CheckRecord> checks{compare_losses(reference, candidate, policy),
                                           compare_gradients(reference, candidate, policy)};
  for (auto& c : compare_state(reference, candidate, policy)) checks.push_back(std::move(c));
  return checks;
}

reports::CheckRecord rank_agreement_check(int64_t step, int64_t rank, const std::string& tensor) {
  reports::CheckRecord c;
  c.name = "ranks_bitwise_equal";
  if (step < 0) {
    c.status = "pass";
    c.detail = "all ranks held bit-identical parameters after every step";
  } else {
    c.status = "fail";
    c.tensor = tensor;
    c.step = step;
    c.detail = fmt::format("rank {} differs from rank 0 in {} after step {}", rank, tensor, step);
  }
  return c;
}

}  // namespace ddpbench::compare
