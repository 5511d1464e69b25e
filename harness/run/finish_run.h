// finish_run.h — the end of a run, shared by the launching parent and by rank 0 of an externally
// launched world: compare every mode with its reference, assemble the report, stage the
// state files, write every report format atomically, and pick the exit code.
#pragma once

#include <vector>

#include "output/output_dir.h"
#include "reports/run/run_record.h"
#include "run/run_description.h"
#include "runtime/execution_context.h"
#include "training/mode_outcome.h"
#include "training/reference_runs.h"
#include "training/run_setup.h"

namespace ddpbench::run {

// Returns the exit code: 1 when the verdict (reports/run/verdict.h) is a failure, else 0 (a run that
// judged nothing says so: its verdict is not_judged, never pass).
// Each data-parallel mode is judged against its exact reference (`references`, or single's
// outcome when that is plain single-device training).
int finish_run(const training::RunSetup& setup, const runtime::ExecutionContext& context,
               const RunDescription& run, std::vector<training::ModeOutcome> outcomes,
               const std::vector<training::ReferenceOutcome>& references, output::OutputDir& out);

}  // namespace ddpbench::run
