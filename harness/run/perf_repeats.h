// perf_repeats.h — run --repeats R: after the run's own perf phase (repeat 1), the same
// configuration's perf phase runs R - 1 more times, each a fresh `ddpbench run --perf-only` child
// (fresh rank processes, as a CI gate's next run would be: Note [Repeats, not steps]), writing
// into a scratch folder that is removed afterwards; every mode's timed steps of each repeat are
// added to its outcome.
#pragma once

#include <vector>

#include "requests/run_request.h"
#include "training/mode_outcome.h"

namespace ddpbench::run {

// The perf-only twin of `request` for one repeat, written to `out`.
requests::RunRequest repeat_twin(const requests::RunRequest& request, const std::string& out);

// Runs repeats 2..R and appends each mode's timed steps to `outcomes` (matched by mode and world
// size). Throws WorkerFailure when a repeat fails (its exit code and where its output is said).
void run_perf_repeats(const requests::RunRequest& request, int64_t repeats,
                      const requests::CommandLineOf& command_line,
                      std::vector<training::ModeOutcome>& outcomes);

}  // namespace ddpbench::run
