// run_outcome.h — the end of a run, shared by the launching parent and by rank 0 of an externally
// launched world: compare every mode with single-device training, assemble the report, write
// the state files and report.json atomically, print the console summary, pick the exit code.
#pragma once

#include <string>
#include <vector>

#include "cli/output_dir.h"
#include "cli/run_setup.h"
#include "compare/mode_comparison.h"
#include "data/batch_plan.h"
#include "metrics/step_statistics.h"
#include "reports/run_record.h"

namespace ddpbench::cli {

struct ModeOutcome {
  std::string mode;
  int64_t world_size = 1;
  compare::ModeTrace trace;
  std::vector<metrics::PhaseTimes> check_times;  // per checked step
  std::vector<metrics::PhaseTimes> perf_times;   // per timed step (after warm-up)
  int64_t perf_samples_per_step = 0;
  std::string backend;
  int64_t bytes_per_step = 0;
  int64_t buckets = 0;
  std::vector<reports::CheckRecord> extra_checks;  // e.g. ranks_bitwise_equal

  bool throughput_defined() const { return !perf_times.empty(); }
};

// The perf-phase figures of one mode (formulas in reports/METRICS.md).
reports::ThroughputRecord throughput_of(const RunSetup& setup, const ModeOutcome& outcome);

struct RunDescription {
  std::string dataset;
  const data::GlobalBatchPlan* plan = nullptr;
  std::string grad_record;  // "full" or "fingerprint"
  std::vector<std::string> argv;
};

// Returns the exit code: 0 when every check passes or is an expected divergence, 1 otherwise.
int finish_run(const RunSetup& setup, const RunDescription& run, std::vector<ModeOutcome> outcomes,
               OutputDir& out);

}  // namespace ddpbench::cli
