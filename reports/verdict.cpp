// verdict.cpp — see verdict.h.
#include "reports/verdict.h"

#include <fmt/format.h>

#include <cmath>

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

// Whether the worst absolute difference is one a check within its limit can have.
bool max_abs_within(const CheckRecord& c) {
  if (!std::isfinite(c.max_abs_diff)) return false;
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

CheckStatus check_status(const CheckRecord& c, const DivergenceRecord& first) {
  const bool nothing_compared = c.items < 1;
  const bool over_limit = !(c.error <= c.limit);  // NaN is over
  if (nothing_compared || c.outside > 0 || over_limit ||
      (first.stage != Stage::kNone && first.stage == c.name)) {
    return CheckStatus::kFail;
  }
  if (c.divergent > 0) return CheckStatus::kExpectedDivergence;
  // Within the limit, and so every difference too: a worst difference no passing comparison can
  // produce means the numbers are not what the comparison recorded.
  return max_abs_within(c) ? CheckStatus::kPass : CheckStatus::kFail;
}

Verdict run_verdict(const RunReport& report) {
  bool judged = false;
  for (const ModeResult& r : report.results) {
    if (r.first_divergence.stage != Stage::kNone) return Verdict::kFail;
    for (const CheckRecord& c : r.checks) {
      judged = true;
      if (check_status(c, r.first_divergence) == CheckStatus::kFail) return Verdict::kFail;
    }
    if (!r.checks.empty() && !finite_losses(r)) return Verdict::kFail;
  }
  return judged ? Verdict::kPass : Verdict::kNotJudged;
}

std::string check_inconsistency(const CheckRecord& c, const std::string& where) {
  if (c.name == Stage::kNone) return fmt::format("{}.name is empty", where);
  if (c.items < 0 || c.outside < 0 || c.divergent < 0 || c.outside + c.divergent > c.items) {
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

std::string describe_counts(const CheckRecord& c) {
  if (c.items < 1) return "nothing compared";
  if (c.outside > 0) {
    return fmt::format("{} of {} items outside {}", c.outside, c.items, describe_rule(c));
  }
  if (c.divergent > 0) {
    return fmt::format("{} of {} items differ beyond {} (declared divergent)", c.divergent, c.items,
                       describe_rule(c));
  }
  return fmt::format("{} item{} within {}", c.items, c.items == 1 ? "" : "s", describe_rule(c));
}

}  // namespace ddpbench::reports
