// divergence_text.cpp — see divergence_text.h.
#include "reports/run/divergence_text.h"

#include <fmt/format.h>

namespace ddpbench::reports {

std::string describe_first_divergence(const DivergenceRecord& d) {
  if (d.stage == Stage::kNone) return "";
  const std::string when =
      d.step >= 0 ? fmt::format("step {}", d.step) : std::string("after the last step");
  std::string s;
  const StageSpec& spec = spec_of(d.stage);
  if (!spec.sized) {
    // Ranks parting from rank 0 have no size, only what differs (`measure` says it).
    s = fmt::format("{}, {} failed first ({}): {}", when, spec.name, spec.phase, d.measure);
  } else {
    const std::string what = d.stage == Stage::kLoss
                                 ? std::string("the loss")
                                 : fmt::format("{} of {}", name_of(d.stage), d.tensor);
    s = fmt::format("{}, {} parted first ({}): {:.3e} outside {}", when, what, spec.phase, d.error,
                    d.measure);
  }
  if (!d.bisect.empty()) s += fmt::format("; in float64 it {}: {}", d.bisect, d.bisect_detail);
  return s;
}

std::string describe_reference(const ReferenceRecord& r) {
  // An empty name: nothing judged the mode against a reference (Note [What a mode was judged
  // against], verdict.h); its checks compare its ranks with each other, or it with ddp.
  return fmt::format("{}{}", r.name.empty() ? "no reference" : r.name,
                     r.comparison.empty() ? "" : ", " + r.comparison);
}

std::string describe_efficiency(const ModeResult& r) {
  return r.scaling_efficiency < 0 ? "-" : fmt::format("{:.1f}%", 100 * r.scaling_efficiency);
}

std::string describe_precision(const RunConfig& c) {
  return c.amp.empty() || c.amp == "off" ? c.dtype : fmt::format("{}, autocast {}", c.dtype, c.amp);
}

std::string describe_evaluation(const EvaluationRecord& e) {
  if (e.status == EvaluationStatus::kNotRun) return "";
  if (e.status == EvaluationStatus::kSkipped) return "skipped: " + e.skipped_reason;
  return fmt::format("on {}: {}", e.dataset, e.summary);
}

}  // namespace ddpbench::reports
