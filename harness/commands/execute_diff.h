// execute_diff.h — `ddpbench diff A B`, once its flags are parsed: read both traces (a run folder's
// through its report.json, which names the trace and its hash, or a trace file), judge them
// (trace/trace_diff.h), print the summary, write diff.json, diff.txt and diff.html, and exit 1
// when something diverged (or, with --expect identical, differs at all).
#pragma once

#include "requests/run_request.h"

namespace ddpbench::commands {

int execute_diff(const requests::DiffRequest& request);

}  // namespace ddpbench::commands
