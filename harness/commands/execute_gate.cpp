// execute_gate.cpp — see execute_gate.h.
#include "commands/execute_gate.h"

#include <fmt/format.h>

#include "commands/history_inputs.h"
#include "compare/gate_thresholds.h"
#include "compare/regression_gate.h"
#include "compare/report_history.h"
#include "errors.h"
#include "output/report_file.h"
#include "reports/gate_table.h"

namespace ddpbench::run {

int execute_gate(const GateRequest& request) {
  compare::GateThresholds thresholds;
  thresholds.max_slowdown = request.max_slowdown.value_or(thresholds.max_slowdown);
  if (!request.thresholds.empty()) {
    thresholds = compare::load_gate_thresholds(request.thresholds, request.max_slowdown);
  }
  thresholds.allow_missing = request.allow_missing;
  thresholds.allow_undecided = request.allow_undecided;
  if (request.baseline.empty() == request.history.empty()) {
    throw InputError(
        "gate: pass --baseline REPORT (one earlier run) or --history DIR (the runs of earlier "
        "commits)");
  }
  reports::RunReport baseline;
  if (!request.history.empty()) {
    // The newest earlier run is the baseline of everything but the throughput, which is judged
    // against the lookback distribution of the whole series (Note [History status]).
    const std::vector<compare::LabelledReport> series =
        load_history({request.history}, request.order, "gate --history");
    thresholds.lookback_medians =
        compare::lookback_medians(series, thresholds.max_slowdown, request.lookback);
    baseline = series.back().report;
  } else {
    baseline = output::read_report_file(request.baseline);
  }
  const reports::RunReport current = output::read_report_file(request.current);
  const compare::GateResult g = compare::run_gate(baseline, current, thresholds);
  fmt::print("{}", reports::render_gate_table(g, request.format == "md"));
  return g.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::run
