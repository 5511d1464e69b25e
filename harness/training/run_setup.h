// run_setup.h — a validated `ddpbench run`, as every phase of every mode reads it: the request
// resolved against the scenario's defaults and checked once (run/resolve_run.h), before anything
// runs, by the launching parent and by every rank alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/backend_support.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "checkpoint/checkpoint.h"
#include "modes/common/fault_injection.h"
#include "modes/common/gradient_record.h"
#include "modes/common/mode_kind.h"
#include "modes/ddp/distributed_model.h"
#include "runtime/execution_context.h"
#include "scenarios/registry.h"
#include "scenarios/scenario.h"

namespace ddpbench::training {

struct RunSetup {
  // The scenario as configured (a built-in, or one from --config / KEY VALUE overrides, which
  // no registry holds: hence owned).
  std::shared_ptr<const scenarios::ScenarioSpec> spec;
  std::vector<modes::ModeKind> modes;
  int64_t steps = 0;
  int64_t global_batch = 0;
  int64_t seed = 0;
  bool drop_last = false;  // the sampler's: --drop-last or the scenario's
  int64_t world_size = 1;
  // dtype, intra-op threads and numerics of every process of the run.
  runtime::ContextRequest context;
  scenarios::BuildRequest request;
  comm::Backend backend = comm::default_backend();
  std::string master_addr;
  bool share_gpus = false;  // several ranks/replicas may share a CUDA device
  std::chrono::milliseconds timeout{0};
  bool debug_collectives = false;  // Note [Fingerprints before collectives]
  modes::ddp::DdpOptions ddp;
  std::optional<modes::FaultSpec> fault;
  // --grad-check full or fingerprint; none for auto (full below a model size: mode_phases.h).
  std::optional<modes::GradRecordKind> grad_check;
  // Data-parallel modes start every checked step from their reference's state
  // (training/lockstep.h); their state files are then the state after the last lockstep step.
  bool lockstep = false;
  bool sync_bn = false;  // DDP converts BatchNorm to SyncBN
  // Gradient accumulation micro-steps per optimizer step in dp, ddp and zero (single trains the
  // whole global batch in one pass), and whether DDP's no_sync() covers all but the last of them.
  int64_t accumulation_steps = 1;
  bool no_sync = true;
  int64_t check_steps = 0;   // steps of the check phase (0 with --perf-only)
  int64_t perf_steps = 0;    // timed steps of the perf phase (0 with --check-only)
  int64_t warmup_steps = 0;  // discarded before the timed steps
  bool strong_scaling = false;
  bool progress = false;  // draw a progress line (stdout is a TTY and no --quiet)
  bool quiet = false;     // --quiet: no progress or status lines, only the summary
  bool export_batches = false;
  // --data-on-device: every mode's batches come from the dataset materialised on its device
  // (data/device_data.h) instead of the host collate.
  bool data_on_device = false;
  // --trace: every mode's check phase records what each step computed (modes/common/step_trace.h)
  // and the run writes it as trace.pt, for `ddpbench diff`.
  bool trace = false;
  // Samples of the held-out set the evaluation pass uses (training/evaluation.h); 0 = no pass.
  int64_t eval_size = 0;
  // Why the default eval_size was lowered for this model (the run header says it); empty if not.
  std::string eval_size_note;
  bool bisect = false;      // re-run a failing run in float64 (run/bisect.h)
  std::string cpu_pinning;  // Note [Pinned ranks] (launch/core_pinning.h), as config records it
  int64_t repeats = 1;      // --repeats: the perf phase's repeats (run/perf_repeats.h)
  std::string out;
  // --checkpoint-every N: the check phase of every mode (DDP: rank 0) keeps a checkpoint after
  // every N-th run-global step (0: none), its keys prefixed with checkpoint_prefix.
  int64_t checkpoint_every = 0;
  std::string checkpoint_prefix;
  // --resume: the checkpoint the check phase of every mode and every reference starts from, at
  // its step (run/resume.h); null without --resume.
  std::shared_ptr<const checkpoint::Checkpoint> resume;
  // The zero mode's ZeRO stage (1, 2 or 3).
  int64_t zero_stage = 1;
  // --shard-group S: the zero mode shards over groups of S ranks and replicates across the K/S
  // groups (HSDP, modes/zero/hsdp_mesh.h); 0: over the whole world (S = K is kept as 0, so that
  // every reader of the value sees 0 without replicas).
  int64_t shard_group = 0;
  // A rank runs out of batches within the run (GlobalBatchPlan::joins_within): the per-rank
  // modes train inside PyTorch's Join (Note [PyTorch's Join, as it runs]).
  bool in_join = false;
  // The options report.json records as given (requests/run_options.h: config.options).
  std::vector<std::string> recorded_options;

  bool has_mode(modes::ModeKind mode) const { return modes::has_mode(modes, mode); }
  // Whether zero runs as HSDP with two or more replicas.
  bool has_replicas() const {
    return shard_group > 0;  // resolve_zero sets it for zero with S < K only
  }
  // Whether a mode runs one process per rank (ddp, zero): the run has a backend and a launch.
  bool has_per_rank_mode() const { return !modes::per_rank_modes(modes).empty(); }
  // "float32" or "float64".
  const char* dtype_name() const;
  // The run-global step the check phase starts at (the resumed checkpoint's, else 0), and the
  // state it starts from (null: the fresh model's).
  int64_t first_step() const { return resume ? resume->meta.step : 0; }
  std::shared_ptr<const modes::TrainingState> start_state() const;
  // The `inf` fault's step, at which the processes outside DDP (single, dp and every reference)
  // overflow as DDP's allreduce makes every rank overflow (TrainOptions::overflow_step); -1
  // without it.
  int64_t overflow_step() const {
    return fault && fault->kind == modes::FaultKind::kInf ? fault->step : -1;
  }
};

// The run's plan over `dataset`: the scenario's sampler settings and seed, `replicas` ranks and
// `global_batch` samples per step.
data::GlobalBatchPlan make_plan(const RunSetup& setup, const data::Dataset& dataset,
                                int64_t replicas, int64_t global_batch);

}  // namespace ddpbench::training
