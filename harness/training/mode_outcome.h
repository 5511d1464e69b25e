// mode_outcome.h — what one mode produced in a run, in the form the finishing step needs: its
// checked trajectory (losses, gradients, final state), its phase times, and the mode-specific
// figures and checks. DDP rank 0 sends its outcome to the launching parent (outcome_codec.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/mode_comparison.h"
#include "metrics/step_statistics.h"
#include "modes/common/mode_kind.h"
#include "modes/common/trace_entry.h"
#include "reports/run/run_record.h"

namespace ddpbench::training {

// A checkpoint the check phase kept (--checkpoint-every): its step and its file's bytes
// (checkpoint/checkpoint.h), staged into the output folder with the report.
struct SavedCheckpoint {
  int64_t step = 0;
  std::vector<char> bytes;
};

struct ModeOutcome {
  modes::ModeKind mode = modes::ModeKind::kSingle;
  int64_t world_size = 1;
  compare::ModeTrace trace;                      // empty when the check phase did not run
  std::vector<metrics::PhaseTimes> check_times;  // per checked step
  std::vector<metrics::PhaseTimes> perf_times;   // per timed step (after warm-up)
  // ddp, zero: every rank's own timed steps, in rank order (perf_times is their slowest).
  std::vector<reports::RankTimingRecord> rank_timings;
  // --repeats: the timed step times and runner loads of repeats 2..R (run/perf_repeats.h; the
  // parent's, never sent by a rank).
  std::vector<reports::RepeatRecord> more_repeats;
  // What else the machine did while this mode ran in this process's run (repeat 1), measured by
  // the launching parent around it (execute_run.cpp; never sent by a rank).
  reports::RunnerLoadRecord runner_load;
  double perf_samples_per_step = 0;  // mean samples really processed per timed step
  std::string backend;               // ddp's collective backend
  int64_t bytes_per_step = 0;        // ddp: gradient bytes reduced per rank per step
  int64_t buckets = 0;               // ddp: reducer buckets (0 for the naive strategy)
  // ddp: collectives rank 0 issued in backward and gradient reduction per optimizer step (all
  // accumulation micro-steps; last step of the last phase).
  int64_t gradient_collectives_per_step = 0;
  std::vector<reports::CheckRecord> extra_checks;  // e.g. ranks_bitwise_equal
  // Peak CUDA memory allocated over the mode's phases: one per DDP rank (rank order), one per DP
  // replica device, one for single. Empty on the CPU.
  std::vector<int64_t> peak_device_memory_bytes;
  std::vector<std::string> hosts;            // ddp: the host of each rank, in rank order
  std::vector<SavedCheckpoint> checkpoints;  // check phase, in step order (ddp: rank 0's)
  reports::EvaluationRecord evaluation;      // the evaluation pass (training/evaluation.h)
  reports::AmpErrorRecord amp_vs_float32;    // --amp: training/float32_shadow.h
  // ddp, zero: what each rank held after the last step of its last phase (memory_footprint.h).
  std::vector<reports::RankMemoryRecord> memory;
  // ddp, zero: rank 0's collectives per checked step (training/collective_accounting.h).
  std::vector<reports::StepCollectivesRecord> collectives;
  // --trace: what the check phase computed, in computation order (modes/common/step_trace.h;
  // ddp, zero: rank 0's), and whether the model reported its forward outputs.
  std::vector<modes::TraceEntry> trace_entries;
  bool traced_forward = false;

  bool throughput_defined() const { return !perf_times.empty(); }
};

}  // namespace ddpbench::training
