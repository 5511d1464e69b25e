// trace_output.cpp — see trace_output.h.
#include "run/trace_output.h"

#include <fmt/format.h>

#include "modes/common/step_trace.h"
#include "modes/ddp/comm_hook.h"
#include "scenarios/content_hash.h"
#include "trace/trace_context.h"
#include "trace/trace_diff.h"
#include "trace/trace_file.h"

namespace ddpbench::run {
namespace {

// How far a mode's trace sees into the forward (Note in scenarios/models/forward_probe.h).
std::string forward_granularity(const training::RunSetup& s, const training::ModeOutcome& o) {
  if (o.traced_forward) return "module outputs (the built-in model's probes)";
  if (o.mode == modes::ModeKind::kDp) {
    return "none: dp's replicas are copies of the model, which report no outputs";
  }
  if (!s.spec->model_file.empty()) {
    return "none: a TorchScript model's forward is one graph whose intermediate values libtorch "
           "does not hand out; the loss and every per-parameter tensor are traced";
  }
  return "none: this model reports no module outputs";
}

// What the mode's reduction divides its ranks' summed local gradients by, and the dtype they
// travel in (trace_file.h's ModeEntries): ddp averages over the ranks, as zero does; dp sums its
// replicas' gradients (DataParallel's reduce-add); single has its own alone.
std::pair<int64_t, std::string> reduction_of(const training::RunSetup& s, modes::ModeKind mode) {
  if (mode != modes::ModeKind::kDdp && mode != modes::ModeKind::kZero) return {1, ""};
  std::string wire;
  if (mode == modes::ModeKind::kDdp) {
    switch (s.ddp.reducer.comm_hook) {
      case modes::ddp::CommHookKind::kFp16Compress:
        wire = "float16";
        break;
      case modes::ddp::CommHookKind::kBf16Compress:
        wire = "bfloat16";
        break;
      case modes::ddp::CommHookKind::kAllreduce:
        break;
    }
  }
  return {s.world_size, wire};
}

}  // namespace

void stage_trace(const training::RunSetup& s, const std::vector<training::ModeOutcome>& outcomes,
                 reports::RunReport& report, output::OutputDir& out) {
  if (!s.trace) return;
  trace::TraceFile t;
  t.experiment = trace::experiment_fields(report.config);
  const double limit = s.context.dtype == at::kDouble ? s.spec->tolerances.gradient_float64
                                                      : s.spec->tolerances.gradient_float32;
  t.experiment.emplace_back(trace::kRoundingLimitField, fmt::format("{:g}", limit));
  t.environment = trace::environment_fields(report.context, report.config);
  t.values = fmt::format(
      "per-parameter tensors {} (the run's gradient record); forward outputs whole up to {} "
      "elements under a full record, else fingerprints (sum, L1, L2, max |x| in float64)",
      report.config.gradient_check == "full" ? "whole" : "as fingerprints",
      modes::kFullOutputLimit);
  for (const training::ModeOutcome& o : outcomes) {
    if (o.trace_entries.empty()) continue;
    const auto [divisor, wire] = reduction_of(s, o.mode);
    t.modes.push_back(
        {modes::mode_name(o.mode), forward_granularity(s, o), o.trace_entries, divisor, wire});
  }
  const std::vector<char> bytes = trace::trace_bytes(t);
  const std::string_view view(bytes.data(), bytes.size());
  out.stage(trace::kTraceFileName, view);
  report.config.trace_file = trace::kTraceFileName;
  report.config.trace_sha256 = scenarios::sha256_hex(view);
}

}  // namespace ddpbench::run
