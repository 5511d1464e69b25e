// trace_output.h — --trace's file: every mode's traced entries (training/mode_outcome.h), the
// run's experiment and environment as its report records them, staged as trace.pt beside the
// report, which names the file and its hash.
#pragma once

#include <vector>

#include "output/output_dir.h"
#include "reports/run/run_record.h"
#include "training/mode_outcome.h"
#include "training/run_setup.h"

namespace ddpbench::run {

// Stages trace.pt into `out` and names it in `report.config`; nothing without --trace.
void stage_trace(const training::RunSetup& setup,
                 const std::vector<training::ModeOutcome>& outcomes, reports::RunReport& report,
                 output::OutputDir& out);

}  // namespace ddpbench::run
