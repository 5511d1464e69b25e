// execute_gate.h — `ddpbench gate`, once its flags are parsed: read both reports and the
// thresholds, judge every point (compare/regression_gate.h), print the table, and exit 1 on a
// regression.
#pragma once

#include "requests/run_request.h"

namespace ddpbench::commands {

int execute_gate(const requests::GateRequest& request);

}  // namespace ddpbench::commands
