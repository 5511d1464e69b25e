// execute_ab.h — `ddpbench ab`, once its flags are parsed: the baseline build and the current
// build run the same `run` arguments in R rounds within this one job, each round both builds
// once, back to back, in a drawn order balanced over the rounds, each run a fresh process; then
// the gate judges the first round's reports for their checks and the throughput on the paired
// rounds (Note [Deciding a slowdown from paired rounds], stats/speed_change.h), unless the
// runner's load explains a slowdown (Note [A slowdown the load explains], stats/load_rule.h).
// Writes ab.json (the rounds, their order, each side's seconds per step and the runner's load,
// and the verdicts) and every round's report of both sides to --out; prints the gate's table;
// exits 1 on a regression.
#pragma once

#include "requests/run_request.h"

namespace ddpbench::commands {

int execute_ab(const requests::AbRequest& request);

}  // namespace ddpbench::commands
