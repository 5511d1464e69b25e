// divergence_text.cpp — see divergence_text.h.
#include "reports/divergence_text.h"

#include <fmt/format.h>

namespace ddpbench::reports {
namespace {

// Which part of a step computed the stage: what a reader needs to know where to look.
const char* phase_of(Stage stage) {
  switch (stage) {
    case Stage::kLoss:
    case Stage::kBuffers:
      return "forward";
    case Stage::kGradients:
      return "backward";
    case Stage::kUpdates:
    case Stage::kOptimizerState:
      return "optimizer step";
    case Stage::kRanksBuffersEqual:
      return "buffer broadcast before the forward";
    case Stage::kRanksBitwiseEqual:
      return "ranks apart after the step";
    case Stage::kEvaluation:
      return "evaluation after training";
    case Stage::kInjectedFault:
      return "the injected fault";
    case Stage::kLossScale:
    case Stage::kRanksScaleEqual:
      return "GradScaler update after the step";
    case Stage::kMatchesDdp:
      return "against ddp in the same run";
    case Stage::kParameters:
    case Stage::kNone:
      break;
  }
  return "final state";
}

}  // namespace

std::string describe_first_divergence(const DivergenceRecord& d) {
  if (d.stage == Stage::kNone) return "";
  const std::string when =
      d.step >= 0 ? fmt::format("step {}", d.step) : std::string("after the last step");
  std::string s;
  if (d.stage == Stage::kRanksBitwiseEqual || d.stage == Stage::kRanksBuffersEqual ||
      d.stage == Stage::kLossScale || d.stage == Stage::kRanksScaleEqual) {
    // Ranks parting from rank 0 have no size, only what differs (`measure` says it).
    s = fmt::format("{}, {} failed first ({}): {}", when, name_of(d.stage), phase_of(d.stage),
                    d.measure);
  } else {
    const std::string what = d.stage == Stage::kLoss
                                 ? std::string("the loss")
                                 : fmt::format("{} of {}", name_of(d.stage), d.tensor);
    s = fmt::format("{}, {} parted first ({}): {:.3e} outside {}", when, what, phase_of(d.stage),
                    d.error, d.measure);
  }
  if (!d.bisect.empty()) s += fmt::format("; in float64 it {}: {}", d.bisect, d.bisect_detail);
  return s;
}

std::string describe_reference(const ReferenceRecord& r) {
  return fmt::format("{}{}", r.name.empty() ? "single" : r.name,
                     r.comparison.empty() ? "" : ", " + r.comparison);
}

std::string describe_efficiency(const ModeResult& r) {
  return r.scaling_efficiency < 0 ? "-" : fmt::format("{:.1f}%", 100 * r.scaling_efficiency);
}

std::string describe_precision(const RunConfig& c) {
  return c.amp.empty() || c.amp == "off" ? c.dtype : fmt::format("{}, autocast {}", c.dtype, c.amp);
}

std::string describe_evaluation(const EvaluationRecord& e) {
  if (e.status.empty()) return "";
  if (e.status == "skipped") return "skipped: " + e.skipped_reason;
  return fmt::format("on {}: {}", e.dataset, e.summary);
}

}  // namespace ddpbench::reports
