// finish_run.h — the end of a run, shared by the launching parent and by rank 0 of an externally
// launched world: compare every mode with its reference, assemble the report, stage the
// state files, write every report format atomically, and pick the exit code.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "output/output_dir.h"
#include "reports/run_record.h"
#include "runtime/execution_context.h"
#include "training/exact_reference.h"
#include "training/mode_outcome.h"
#include "training/phase_inputs.h"
#include "training/reference_runs.h"
#include "training/run_setup.h"

namespace ddpbench::run {

// The perf-phase figures of one mode (formulas in reports/METRICS.md).
reports::ThroughputRecord throughput_of(const training::RunSetup& setup,
                                        const training::ModeOutcome& outcome);

struct RunDescription {
  std::string dataset;
  const data::GlobalBatchPlan* plan = nullptr;
  std::string grad_record;  // "full" or "fingerprint"
  std::vector<std::string> argv;
  const torch::nn::Module* model = nullptr;  // a fresh instance: what the exact references model
  // What the phases trained from: a failing comparison's rounding floor is measured from it
  // (training/floor_measurement.h); null: none is measured.
  const training::PhaseInputs* inputs = nullptr;
  // --bisect: annotates a failing report's first divergences from a float64 re-run (run/bisect.h);
  // empty where the run cannot start one (under an external launcher).
  std::function<void(reports::RunReport&)> bisect;
};

// Returns the exit code: 1 when the verdict (reports/verdict.h) is a failure, else 0 (a run that
// judged nothing says so: its verdict is not_judged, never pass).
// Each data-parallel mode is judged against its exact reference (`references`, or single's
// outcome when that is plain single-device training).
int finish_run(const training::RunSetup& setup, const runtime::ExecutionContext& context,
               const RunDescription& run, std::vector<training::ModeOutcome> outcomes,
               const std::vector<training::ReferenceOutcome>& references, output::OutputDir& out);

}  // namespace ddpbench::run
