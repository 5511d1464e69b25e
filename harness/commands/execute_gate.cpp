// execute_gate.cpp — see execute_gate.h.
#include "commands/execute_gate.h"

#include <fmt/format.h>

#include "commands/history_inputs.h"
#include "compare/gate_thresholds.h"
#include "compare/regression_gate.h"
#include "compare/report_history.h"
#include "errors.h"
#include "output/report_file.h"
#include "quoted_input.h"
#include "reports/gate/gate_table.h"

namespace ddpbench::commands {

int execute_gate(const requests::GateRequest& request) {
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
  const reports::RunReport current = output::read_report_file(request.current);
  reports::RunReport baseline;
  std::vector<std::string> notes;
  if (!request.history.empty()) {
    // The newest earlier run is the baseline of everything but the throughput, which is judged
    // against the lookback distribution of the whole series (Note [History status]).
    std::vector<std::string> left_out;
    std::vector<compare::LabelledReport> series =
        load_history({request.history}, request.order, "gate --history", &left_out);
    // The current run found among the earlier ones is left out: pooled into its own lookback, it
    // would be judged against itself.
    for (auto it = series.begin(); it != series.end();) {
      if (!compare::same_run(it->report, current)) {
        ++it;
        continue;
      }
      left_out.push_back(
          fmt::format("left out {}: it is the current run, which is not judged against itself",
                      quoted_input(it->label)));
      it = series.erase(it);
    }
    if (series.empty()) {
      throw InputError(fmt::format(
          "gate --history {}: it holds no run but the current one: nothing earlier to judge it "
          "against; pass the runs of earlier commits",
          quoted_input(request.history)));
    }
    thresholds.lookback_medians =
        compare::lookback_medians(series, thresholds.max_slowdown, request.lookback);
    baseline = series.back().report;
    for (const std::string& why : left_out) notes.push_back("gate --history: " + why);
    notes.push_back(fmt::format(
        "gate --history: checks against the newest earlier run {}; throughput against the "
        "lookback (per point, the repeat medians of up to {} earlier commit{} that were not "
        "slower themselves, pooled)",
        quoted_input(series.back().label), request.lookback, request.lookback == 1 ? "" : "s"));
  } else {
    baseline = output::read_report_file(request.baseline);
  }
  compare::GateResult g = compare::run_gate(baseline, current, thresholds);
  g.notes = notes;
  fmt::print("{}", reports::render_gate_table(g, request.format == "md"));
  return g.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::commands
