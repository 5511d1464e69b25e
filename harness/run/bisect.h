// bisect.h — --bisect: when a float32 run fails, the same configuration (scenario, modes, world
// size, batch, steps, seed, faults, comparison) runs again in float64 as a child process, and each
// failing mode's first divergence says whether the difference persists there (an algorithm
// difference: float64 cannot hide it) or vanishes (float32 rounding). The re-run is check-only
// and writes into a scratch directory that is removed afterwards.
//
// Note [Bisect under autocast]: under --amp the float64 re-run drops autocast (float64 has no
// mixed precision), so it answers whether the difference is the algorithm's (`persists`) or comes
// with mixed precision (`vanishes`). The second does not make the failure rounding, as it does
// for a float32 run (Note [Bisect's answer counts]): the exact reference rounds each rank's
// gradients to the autocast dtype as the mode does (Note [Mixed precision judged against its own
// reference]), and free-running its drift is measured (Note [Mixed precision free-running]), so
// what is left is a difference only autocast shows — a wrong weight cast, a GradScaler's — and the
// failure stands, with that said.
#pragma once

#include "reports/run/run_record.h"
#include "requests/run_request.h"

namespace ddpbench::run {

// The float64 twin of `request`: check-only, quiet, no export, no --bisect, written to `out`.
// `lockstep` is the comparison the original run used, kept so the twin judges the same way.
requests::RunRequest float64_twin(const requests::RunRequest& request, bool lockstep,
                                  const std::string& out);

// Runs the twin; returns its report, or a report with no results when it did not finish
// (`exit_code` says how it ended).
reports::RunReport run_float64_twin(const requests::RunRequest& request, bool lockstep,
                                    const requests::CommandLineOf& command_line, int& exit_code);

// Fills `bisect` and `bisect_detail` of every failing mode's first divergence in `report` from
// the float64 run (`exit_code` is its exit status: 0 pass, 1 a check failed, else it broke), and
// where the difference vanishes its float64 checks, which make the mode's float32 failures
// `rounding` (Note [Bisect's answer counts], reports/run/verdict.h) unless the run was under --amp
// (Note [Bisect under autocast]). The caller recomputes statuses and the verdict.
void annotate_bisect(reports::RunReport& report, const reports::RunReport& float64, int exit_code);

}  // namespace ddpbench::run
