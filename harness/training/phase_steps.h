// phase_steps.h — the pieces every mode's phases are built from (training/mode_phases.cpp for the
// modes of this process, training/rank_phases.cpp for the per-rank ones): a fresh model, the check
// and perf phases' step-loop options, checkpoints, the checked training under lockstep and the
// float32 shadow, and what a phase keeps of its result. Internal to training/.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "modes/common/gradient_path.h"
#include "modes/common/memory_footprint.h"
#include "modes/common/mode_kind.h"
#include "modes/common/step_loop.h"
#include "scenarios/training_recipe.h"
#include "training/mode_outcome.h"
#include "training/phase_inputs.h"

namespace ddpbench::training {

// A freshly initialised model over the run's dataset: every phase of every mode starts from the
// same initial weights.
scenarios::ScenarioInstance fresh_instance(const PhaseInputs& in);
modes::TrainInputs train_inputs(const PhaseInputs& in, const data::GlobalBatchPlan& plan);

// The check phase runs from the run's first step (--resume: the checkpoint's) to --steps.
modes::TrainOptions check_options(const PhaseInputs& in);
// The perf phase: --warmup + --steps fresh steps, under the perf numerics.
modes::TrainOptions perf_options(const PhaseInputs& in);
// Gradient accumulation: dp, ddp and zero run the run's micro-steps per optimizer step; single
// (the reference) trains each step's whole batch in one pass, which is the claim being checked.
modes::TrainOptions accumulating(modes::TrainOptions o, const RunSetup& s, modes::ModeKind mode);

// --trace: a recorder the check phase's `options` drive (null without the flag), and what it
// recorded, into the outcome.
std::unique_ptr<modes::StepTrace> traced(const PhaseInputs& in, modes::TrainOptions& options);
void keep_trace(ModeOutcome& o, modes::StepTrace& trace);

// The check phase's results go into the outcome's trace.
void keep_check(ModeOutcome& o, modes::TrainResult r, const torch::nn::Module& model,
                int64_t first_step);
// The timed steps of a perf phase: everything after its warm-up.
std::vector<metrics::PhaseTimes> timed_part(std::vector<metrics::PhaseTimes> all, int64_t warmup);
// After `last_step`, at rest, this process's memory footprint into `out` (the gradients are still
// those of the step's reduction there).
void measure_after(modes::TrainOptions& options, int64_t last_step, modes::MemoryFootprint& out);

// --checkpoint-every N: after every N-th run-global step, `mode`'s state as a checkpoint into `o`.
// Null without the flag. With `consolidate` (zero), every rank calls the keeper, which first
// gathers the whole optimizer state (collective), and only `keep` (rank 0) records it; likewise
// `ddp_buckets` (ddp) settles the buckets on every rank and gives the layout rank 0 records.
using Consolidate =
    std::function<std::unique_ptr<torch::optim::Optimizer>(torch::optim::Optimizer&)>;
using CheckpointKeeper = std::function<void(int64_t, torch::nn::Module&, torch::optim::Optimizer&,
                                            const scenarios::GradScaler*)>;
CheckpointKeeper checkpoint_keeper(
    const PhaseInputs& in, modes::ModeKind mode, ModeOutcome& o, Consolidate consolidate = nullptr,
    bool keep = true, std::function<std::vector<std::vector<int64_t>>()> ddp_buckets = nullptr);

// Lockstep: every step of `path` starts from its exact reference's state (training/lockstep.h); the
// per-step state differences go into the trace. Under --amp (on DDP rank 0, or in this process),
// every step is also taken in float32 from the same state (training/float32_shadow.h). `comm` as
// for LockstepDriver.
modes::TrainResult train_checked(const PhaseInputs& in, modes::ModeKind mode,
                                 modes::GradientPath& path, modes::TrainOptions options,
                                 comm::Communicator* comm, bool measure_amp, ModeOutcome& o);

std::vector<std::string> parameter_names(const torch::nn::Module& model);

}  // namespace ddpbench::training
