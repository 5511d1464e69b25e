// execute_gate.cpp — see execute_gate.h.
#include "commands/execute_gate.h"

#include <fmt/format.h>

#include "compare/gate_thresholds.h"
#include "compare/regression_gate.h"
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
  const reports::RunReport baseline = output::read_report_file(request.baseline);
  const reports::RunReport current = output::read_report_file(request.current);
  const compare::GateResult g = compare::run_gate(baseline, current, thresholds);
  fmt::print("{}", reports::render_gate_table(g, request.format == "md"));
  return g.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::run
