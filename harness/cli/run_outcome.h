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
#include "reports/run_record.h"

namespace ddpbench::cli {

struct ModeOutcome {
  std::string mode;
  int64_t world_size = 1;
  compare::ModeTrace trace;
  std::vector<double> step_seconds;
  std::string backend;
  int64_t bytes_per_step = 0;
  int64_t buckets = 0;
  std::vector<reports::CheckRecord> extra_checks;  // e.g. ranks_bitwise_equal
};

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
