// diff_json.cpp — render_diff_json (diff_reporters.h): diff.json; what each field means is
// reports/SCHEMA.md, "diff.json".
#include <cmath>
#include <nlohmann/json.hpp>

#include "reports/diff/diff_reporters.h"

namespace ddpbench::reports {
namespace {

// JSON has no infinity: an unmeasurable error (a shape mismatch, a tensor only one side has) is
// null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json difference_json(const TensorDifference& d) {
  return {
      {"mode", d.mode},
      {"step", d.step},
      {"phase", d.phase},
      {"tensor", d.tensor},
      {"class", diff_class_name(d.cls)},
      {"fingerprint", d.fingerprint},
      {"dtype", d.dtype},
      {"max_abs", number(d.max_abs)},
      {"max_rel", number(d.max_rel)},
      {"ulps", d.ulps >= 0 ? number(d.ulps) : nlohmann::json()},
      {"error", number(d.error)},
      {"limit", d.limit},
      {"cause", d.cause},
      // What the difference was held to, and for a reduction the rounding measured on this
      // tensor and step (Note [A reduction judged by its own contributions]).
      {"rounding",
       {{"held_to", d.held_to},
        {"measured_how", d.measured_how},
        {"range_ulps", d.range_ulps >= 0 ? number(d.range_ulps) : nlohmann::json()},
        {"range", d.range >= 0 ? number(d.range) : nlohmann::json()},
        {"a_outside_ulps", d.a_outside_ulps >= 0 ? number(d.a_outside_ulps) : nlohmann::json()},
        {"b_outside_ulps", d.b_outside_ulps >= 0 ? number(d.b_outside_ulps) : nlohmann::json()}}}};
}

nlohmann::json optional_difference(const std::optional<TensorDifference>& d) {
  return d ? difference_json(*d) : nlohmann::json();
}

}  // namespace

std::string render_diff_json(const DiffRecord& r) {
  nlohmann::json experiment = nlohmann::json::object();
  for (const auto& [k, v] : r.experiment) experiment[k] = v;
  nlohmann::json environment = nlohmann::json::array();
  for (const EnvironmentField& f : r.environment) {
    environment.push_back({{"field", f.field}, {"a", f.a}, {"b", f.b}, {"differs", f.differs()}});
  }
  nlohmann::json spread = nlohmann::json::array();
  for (const StepSpread& s : r.spread) {
    spread.push_back({{"mode", s.mode},
                      {"step", s.step},
                      {"compared", s.compared},
                      {"identical", s.identical},
                      {"rounding", s.rounding},
                      {"growth", s.growth},
                      {"diverged", s.diverged},
                      {"worst_error", number(s.worst_error)},
                      {"worst_tensor", s.worst_tensor}});
  }
  nlohmann::json differences = nlohmann::json::array();
  for (const TensorDifference& d : r.differences) differences.push_back(difference_json(d));
  const nlohmann::json doc = {
      {"kind", "ddpbench diff"},
      {"a", {{"path", r.a.path}, {"trace", r.a.trace}, {"sha256", r.a.sha256}}},
      {"b", {{"path", r.b.path}, {"trace", r.b.trace}, {"sha256", r.b.sha256}}},
      {"experiment", experiment},
      {"environment", environment},
      {"notes", r.notes},
      {"expect_identical", r.expect_identical},
      {"compared", r.compared},
      {"identical", r.identical},
      {"rounding", r.rounding},
      {"growth", r.growth},
      {"diverged", r.diverged},
      {"unmatched", r.unmatched},
      {"class", diff_class_name(r.overall)},
      {"failed", r.failed},
      {"verdict", diff_verdict_line(r)},
      {"first_difference", optional_difference(r.first_difference)},
      {"first_divergence", optional_difference(r.first_divergence)},
      {"spread", spread},
      {"differences", differences},
  };
  return doc.dump(2) + "\n";
}

}  // namespace ddpbench::reports
