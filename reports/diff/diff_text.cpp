// diff_text.cpp — render_diff_text and the words every diff format shares (diff_reporters.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/diff/diff_reporters.h"

namespace ddpbench::reports {
namespace {

std::string size_of(const TensorDifference& d) {
  std::string s = fmt::format("max |diff| {:.3g}, max rel {:.3g}", d.max_abs, d.max_rel);
  if (d.ulps >= 0) s += fmt::format(", {:.3g} ulps of {}", d.ulps, d.dtype);
  if (d.fingerprint) s += " (fingerprints)";
  if (d.held_to == "reduction") {
    // Measured, per element (Note [A reduction judged by its own contributions]).
    const double outside = std::max(d.a_outside_ulps, d.b_outside_ulps);
    const char* unit = d.fingerprint ? "x the bound" : "ulps";
    return s +
           (outside > 0
                ? fmt::format("; {:.3g} {} outside the range of every summation order of its "
                              "ranks' gradients (A {:.3g}, B {:.3g}; range {:.3g} {})",
                              outside, unit, d.a_outside_ulps, d.b_outside_ulps, d.range_ulps, unit)
                : fmt::format("; both within the range every summation order of their "
                              "ranks' gradients spans (measured: up to {:.3g} {} wide)",
                              d.range_ulps, unit));
  }
  if (d.held_to == "follows") return s + fmt::format("; normalized {:.3g}", d.error);
  return s + fmt::format("; normalized {:.3g} {} {:.3g}", d.error,
                         d.cls == DiffClass::kDiverged ? ">" : "<=", d.limit);
}

bool same_place(const TensorDifference& x, const TensorDifference& y) {
  return x.mode == y.mode && x.step == y.step && x.phase == y.phase && x.tensor == y.tensor;
}

}  // namespace

const char* diff_class_name(DiffClass c) {
  switch (c) {
    case DiffClass::kIdentical:
      return "identical";
    case DiffClass::kRounding:
      return "rounding";
    case DiffClass::kGrowth:
      return "growth";
    case DiffClass::kDiverged:
      return "diverged";
  }
  return "?";
}

std::string describe_difference(const TensorDifference& d) {
  const std::string where =
      d.phase == "loss" ? std::string("the loss") : fmt::format("the {} of {}", d.what, d.tensor);
  if (d.cls == DiffClass::kIdentical) {
    return fmt::format("step {}, {}, {}: identical", d.step, d.mode, where);
  }
  if (!std::isfinite(d.error) && d.max_abs == 0) {
    return fmt::format("step {}, {}, {}: {} ({})", d.step, d.mode, where, diff_class_name(d.cls),
                       d.cause);
  }
  return fmt::format("step {}, {}, {}: {} ({}); cause: {}", d.step, d.mode, where,
                     diff_class_name(d.cls), size_of(d), d.cause);
}

std::string diff_verdict_line(const DiffRecord& r) {
  const std::string counts =
      fmt::format("{} tensors compared: {} identical, {} rounding, {} growth, {} diverged",
                  r.compared, r.identical, r.rounding, r.growth, r.diverged);
  const char* expect = r.failed ? "; --expect identical fails any difference" : "";
  switch (r.overall) {
    case DiffClass::kIdentical:
      return "IDENTICAL: every tensor bit for bit (" + counts + ")";
    case DiffClass::kRounding:
      return fmt::format("{}: every difference is rounding where it first appears{} ({}){}",
                         r.failed ? "DIFFERENT" : "ROUNDING",
                         r.growth > 0 ? ", and what follows grows from it" : "", counts, expect);
    case DiffClass::kGrowth:
      return fmt::format("{}: every difference grows from where a step started apart ({}){}",
                         r.failed ? "DIFFERENT" : "GROWTH", counts, expect);
    case DiffClass::kDiverged:
      return "DIVERGED: a difference beyond rounding (" + counts + ")";
  }
  return "?";
}

std::string render_diff_text(const DiffRecord& r) {
  std::string s =
      fmt::format("ddpbench diff\n  A: {} (trace sha256 {})\n  B: {} (trace sha256 {})\n", r.a.path,
                  r.a.sha256.substr(0, 16), r.b.path, r.b.sha256.substr(0, 16));
  s += "experiment (the same in both):";
  for (const auto& [k, v] : r.experiment) {
    if (k == "scenario_yaml") continue;
    s += fmt::format(" {} {};", k, v);
  }
  s.back() = '\n';
  size_t width = 5;
  for (const EnvironmentField& f : r.environment) width = std::max(width, f.field.size());
  int differing = 0;
  for (const EnvironmentField& f : r.environment) {
    if (!f.differs()) continue;
    if (differing++ == 0) s += "environment that differs (A | B):\n";
    s += fmt::format("  {:<{}}  {} | {}\n", f.field, width, f.a, f.b);
  }
  if (differing == 0) s += "environment: every field the same\n";
  for (const std::string& n : r.notes) s += "note: " + n + "\n";
  s += r.first_difference ? "first difference: " + describe_difference(*r.first_difference) + "\n"
                          : "first difference: none\n";
  if (!r.first_divergence) {
    s += "first divergence: none\n";
  } else if (!(r.first_difference && same_place(*r.first_difference, *r.first_divergence))) {
    s += "first divergence: " + describe_difference(*r.first_divergence) + "\n";
  }
  if (r.overall != DiffClass::kIdentical) {
    s += "per step (tensors differing of those compared, worst normalized error):\n";
    for (const StepSpread& p : r.spread) {
      const int64_t differ = p.rounding + p.growth + p.diverged;
      if (differ == 0) {
        s += fmt::format("  {} step {}: all {} identical\n", p.mode, p.step, p.compared);
        continue;
      }
      s += fmt::format(
          "  {} step {}: {}/{} differ ({} rounding, {} growth, {} diverged), worst {:.3g} in {}\n",
          p.mode, p.step, differ, p.compared, p.rounding, p.growth, p.diverged, p.worst_error,
          p.worst_tensor);
    }
  }
  if (r.unmatched > 0) s += fmt::format("{} tensor(s) only one trace holds\n", r.unmatched);
  return s + diff_verdict_line(r) + "\n";
}

}  // namespace ddpbench::reports
