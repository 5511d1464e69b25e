// verdict.cpp — see verdict.h.
#include "reports/run/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <set>

#include "errors.h"

namespace ddpbench::reports {
namespace {

// The worst absolute difference a passing kTolerance check can hold: every element satisfied
// |a - b| <= atol + rtol * |ref| <= atol + rtol * ref_max_abs. The slack absorbs the rounding of
// that bound itself, nothing more.
double tolerance_bound(const CheckRecord& c) {
  const double bound = c.atol + c.rtol * c.ref_max_abs;
  return bound * (1 + 1e-12) + 1e-300;
}

// Whether the worst absolute difference is one a check within its limit can have. An item held to
// its measured rounding floor (Note [Rounding floor measured on the model]) may lie beyond the
// fixed limit's bound, by as much as its floor allowed, which the record does not bound.
bool max_abs_within(const CheckRecord& c) {
  if (!std::isfinite(c.max_abs_diff)) return false;
  if (c.floored > 0) return c.measure != Measure::kExact;
  switch (c.measure) {
    case Measure::kTolerance:
      return c.max_abs_diff <= tolerance_bound(c);
    case Measure::kNormalized:
      return c.max_abs_diff <= c.limit;
    case Measure::kExact:
      return c.max_abs_diff == 0;
  }
  return false;
}

bool finite_losses(const ModeResult& r) {
  for (double l : r.losses) {
    if (!std::isfinite(l)) return false;
  }
  return true;
}

}  // namespace

bool float64_passes(const DivergenceRecord& first) {
  if (first.stage == Stage::kNone || first.float64_checks.empty()) return false;
  bool gradients = false;
  for (const CheckRecord& t : first.float64_checks) {
    if (!check_inconsistency(t, "").empty()) return false;
    const CheckStatus s = check_status(t, {});
    if (s == CheckStatus::kFail || s == CheckStatus::kRounding) return false;
    gradients = gradients || (t.name == Stage::kGradients && t.items > 0);
  }
  return gradients;
}

CheckStatus check_status(const CheckRecord& c, const DivergenceRecord& first) {
  // Nothing could be compared because the reference itself is not finite: not judged either way.
  if (c.items < 1 && c.incomparable > 0 && c.outside == 0 && first.stage != c.name) {
    return CheckStatus::kNotComparable;
  }
  const bool nothing_compared = c.items < 1;
  const bool over_limit = !(c.error <= c.limit);  // NaN is over
  if (nothing_compared || c.outside > 0 || over_limit ||
      (first.stage != Stage::kNone && first.stage == c.name)) {
    // Note [Bisect's answer counts].
    const bool sized = !nothing_compared && c.measure != Measure::kExact;
    return sized && float64_passes(first) ? CheckStatus::kRounding : CheckStatus::kFail;
  }
  if (c.divergent > 0) return CheckStatus::kExpectedDivergence;
  // Within the limit, and so every difference too: a worst difference no passing comparison can
  // produce means the numbers are not what the comparison recorded.
  return max_abs_within(c) ? CheckStatus::kPass : CheckStatus::kFail;
}

ModeScope scope_of(const RunReport& report, const ModeResult& r) {
  ModeScope s;
  s.checked_steps = static_cast<int64_t>(r.losses.size());
  std::set<int64_t> compared;
  // Reports before schema 12 do not say which steps a check compared at: taken as every step.
  const bool recorded = report.schema_version >= 12;
  for (const CheckRecord& c : r.checks) {
    const CheckStatus status = check_status(c, r.first_divergence);
    if (status == CheckStatus::kNotComparable) continue;
    s.judged = true;
    const StageSpec& spec = spec_of(c.name);
    if (spec.basis != Basis::kReference && spec.basis != Basis::kDdp) continue;
    s.reference = s.reference || spec.basis == Basis::kReference;
    s.ddp = s.ddp || spec.basis == Basis::kDdp;
    if (spec.per_step) compared.insert(c.steps_compared.begin(), c.steps_compared.end());
  }
  if (recorded && (s.reference || s.ddp)) {
    for (int64_t i = 0; i < s.checked_steps; ++i) {
      const int64_t step = report.config.first_step + i;
      if (!compared.count(step)) s.unjudged_steps.push_back(step);
    }
  }
  return s;
}

namespace {

// "1-2", "1, 3": steps as a reader scans them.
std::string steps_text(const std::vector<int64_t>& steps) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < steps.size();) {
    size_t j = i;
    while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(steps[i]) : fmt::format("{}-{}", steps[i], steps[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string describe_scope(const RunReport& report, const ModeResult& r) {
  const ModeScope s = scope_of(report, r);
  const std::string mode(name_of(r.mode));
  if (!s.judged) return "";
  if (!s.reference && !s.ddp) {
    return fmt::format(
        "{}: consistent across ranks, not compared with a reference: add single to --modes", mode);
  }
  std::string out;
  if (!s.reference) {
    out = fmt::format(
        "{}: compared with ddp in this run, which no reference judges: add single to --modes",
        mode);
  }
  if (!s.unjudged_steps.empty()) {
    if (!out.empty()) out += "; ";
    const int64_t judged = s.checked_steps - static_cast<int64_t>(s.unjudged_steps.size());
    out += fmt::format(
        "{}: judged at {} of its {} checked steps; at step{} {} nothing was compared (every item "
        "not comparable: the model's rounding there is more than the run's precision resolves)",
        mode, judged, s.checked_steps, s.unjudged_steps.size() == 1 ? "" : "s",
        steps_text(s.unjudged_steps));
  }
  return out;
}

std::string verdict_text(const RunReport& report) {
  std::vector<std::string> scopes;
  for (const ModeResult& r : report.results) {
    if (std::string s = describe_scope(report, r); !s.empty()) scopes.push_back(std::move(s));
  }
  const std::string why = scopes.empty() ? "" : fmt::format("{}", fmt::join(scopes, "; "));
  switch (report.verdict) {
    case Verdict::kPass:
      return why.empty() ? "PASS" : fmt::format("PASS ({})", why);
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kNotJudged:
      return why.empty() ? "NOT JUDGED: no check ran (nothing was compared with single-device "
                           "training)"
                         : fmt::format("NOT JUDGED: {}", why);
  }
  return "";
}

Verdict run_verdict(const RunReport& report) {
  bool judged = false;
  bool uncovered = false;
  for (const ModeResult& r : report.results) {
    if (r.first_divergence.stage != Stage::kNone && !float64_passes(r.first_divergence)) {
      return Verdict::kFail;
    }
    for (const CheckRecord& c : r.checks) {
      const CheckStatus status = check_status(c, r.first_divergence);
      if (status == CheckStatus::kFail) return Verdict::kFail;
      judged = judged || status != CheckStatus::kNotComparable;
    }
    if (!r.checks.empty() && !finite_losses(r)) return Verdict::kFail;
    uncovered = uncovered || !scope_of(report, r).unjudged_steps.empty();
  }
  return judged && !uncovered ? Verdict::kPass : Verdict::kNotJudged;
}

std::string check_inconsistency(const CheckRecord& c, const std::string& where) {
  if (c.name == Stage::kNone) return fmt::format("{}.name is empty", where);
  if (c.items < 0 || c.outside < 0 || c.divergent < 0 || c.incomparable < 0 ||
      c.outside + c.divergent > c.items) {
    return fmt::format("{}: outside ({}) and divergent ({}) items exceed the {} compared", where,
                       c.outside, c.divergent, c.items);
  }
  // Each measure has one limit rule: a limit edited wider is a different check, not a pass.
  const bool limit_ok = c.measure == Measure::kTolerance ? c.limit == 1.0
                        : c.measure == Measure::kExact   ? c.limit == 0.0
                                                         : std::isfinite(c.limit) && c.limit > 0;
  if (!limit_ok) {
    return fmt::format("{}.limit is {:g}, which a {} check never has", where, c.limit,
                       name_of(c.measure));
  }
  if (!(c.atol >= 0) || !(c.rtol >= 0) || !std::isfinite(c.atol) || !std::isfinite(c.rtol) ||
      !(c.ref_max_abs >= 0)) {
    return fmt::format("{}: atol, rtol and ref_max_abs must be finite and >= 0", where);
  }
  // A floored item was beyond the fixed limit and within its floor's, which no exact check has.
  if (c.floored > 0 && (c.measure == Measure::kExact || c.floored > c.items ||
                        !(c.floor_error > c.limit) || !(c.floor_error <= c.floor_limit))) {
    return fmt::format(
        "{}: {} floored item(s) with error {:g} and floor limit {:g} against limit {:g}: a floor "
        "admits only an item beyond the limit and within the floor's, in a check that is not exact",
        where, c.floored, c.floor_error, c.floor_limit, c.limit);
  }
  return "";
}

void require_recomputed(const RunReport& report) {
  for (size_t i = 0; i < report.results.size(); ++i) {
    const ModeResult& r = report.results[i];
    bool stage_has_check = r.first_divergence.stage == Stage::kNone;
    for (size_t j = 0; j < r.checks.size(); ++j) {
      const CheckRecord& c = r.checks[j];
      const std::string where = fmt::format("results[{}].checks[{}]", i, j);
      if (const std::string fault = check_inconsistency(c, where); !fault.empty()) {
        throw InputError(fault + " (was the file edited?)");
      }
      stage_has_check = stage_has_check || c.name == r.first_divergence.stage;
      const CheckStatus computed = check_status(c, r.first_divergence);
      if (computed != c.status) {
        throw InputError(fmt::format(
            "{}.status is {} but its numbers say {} ({} items, {} outside, error {:.3g} against "
            "limit {:.3g}, max_abs_diff {:.3g}{}): the verdict is recomputed from the numbers "
            "(was the file edited?); re-run to get a report",
            where, name_of(c.status), name_of(computed), c.items, c.outside, c.error, c.limit,
            c.max_abs_diff,
            r.first_divergence.stage == c.name ? ", and it is the recorded first divergence" : ""));
      }
    }
    // The float64 re-run's checks decide `rounding` (Note [Bisect's answer counts]): they are
    // recomputed like the others.
    for (size_t j = 0; j < r.first_divergence.float64_checks.size(); ++j) {
      const CheckRecord& t = r.first_divergence.float64_checks[j];
      const std::string where =
          fmt::format("results[{}].first_divergence.float64_checks[{}]", i, j);
      if (const std::string fault = check_inconsistency(t, where); !fault.empty()) {
        throw InputError(fault + " (was the file edited?)");
      }
      if (check_status(t, {}) != t.status) {
        throw InputError(fmt::format(
            "{}.status is {} but its numbers say {}: the verdict is recomputed from the numbers "
            "(was the file edited?); re-run to get a report",
            where, name_of(t.status), name_of(check_status(t, {}))));
      }
    }
    if (!stage_has_check) {
      throw InputError(fmt::format(
          "results[{}].first_divergence.stage is {}, which no check of that result has (was the "
          "file edited?)",
          i, name_of(r.first_divergence.stage)));
    }
  }
  const Verdict computed = run_verdict(report);
  if (computed != report.verdict) {
    throw InputError(fmt::format(
        "verdict is {} but the checks, losses and divergences say {} (was the file edited?); "
        "re-run to get a report",
        name_of(report.verdict), name_of(computed)));
  }
}

std::string describe_rule(const CheckRecord& c) {
  switch (c.measure) {
    case Measure::kTolerance:
      return fmt::format("atol {:g} + rtol {:g} * |ref|", c.atol, c.rtol);
    case Measure::kNormalized:
      return fmt::format("normalized error {:g}", c.limit);
    case Measure::kExact:
      return "exact agreement";
  }
  return "";
}

namespace {

// ", 2 more not comparable (...)": the items a check could not judge and why.
std::string describe_incomparable(const CheckRecord& c) {
  if (c.incomparable_tensor.empty()) {
    return fmt::format(", {} not comparable: the reference is not finite there", c.incomparable);
  }
  return fmt::format(
      ", {} more beyond it not comparable: the reference's own rounding there, measured against "
      "another precision, exceeds the square root of the run's unit roundoff, which this "
      "precision cannot resolve (furthest: {}{})",
      c.incomparable, c.incomparable_tensor,
      c.incomparable_step >= 0 ? fmt::format(" step {}", c.incomparable_step) : std::string());
}

}  // namespace

std::string describe_counts(const CheckRecord& c) {
  const std::string unjudged = c.incomparable > 0 ? describe_incomparable(c) : "";
  if (c.items < 1) return "nothing compared" + unjudged;
  if (c.outside > 0) {
    return fmt::format("{} of {} items outside {}{}", c.outside, c.items, describe_rule(c),
                       unjudged);
  }
  if (c.divergent > 0) {
    return fmt::format("{} of {} items differ beyond {} (declared divergent){}", c.divergent,
                       c.items, describe_rule(c), unjudged);
  }
  std::string out =
      fmt::format("{} item{} within {}", c.items, c.items == 1 ? "" : "s", describe_rule(c));
  if (c.floored > 0) {
    out += fmt::format(
        ", {} of them only within {:g} x the rounding floor measured on the reference (closest: "
        "{}{}, {:.3g} against {:.3g})",
        c.floored, kFloorMultiple, c.floor_tensor,
        c.floor_step >= 0 ? fmt::format(" step {}", c.floor_step) : std::string(), c.floor_error,
        c.floor_limit);
  }
  return out + unjudged;
}

}  // namespace ddpbench::reports
