// mode_phases.h — the two phases of every mode. The check phase trains a fresh model on the run's
// plan with every step checked (losses, gradients, final state); the perf phase trains another
// fresh model for --warmup + --steps steps and keeps the timed steps' phase times. Single and DP
// run in this process; DDP and zero run on every rank (rank_run.h), and rank 0's outcome is
// reported.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "modes/common/gradient_record.h"
#include "modes/common/step_loop.h"
#include "modes/single/single_path.h"
#include "runtime/execution_context.h"
#include "training/mode_outcome.h"
#include "training/phase_inputs.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// --grad-check auto|full|fingerprint resolved for this model.
modes::GradRecordKind resolve_grad_record(const RunSetup& setup, const torch::nn::Module& model);

std::vector<std::string> parameter_names(const torch::nn::Module& model);

// single or dp, in this process; a progress line per phase when the setup asks for one.
ModeOutcome run_local_mode(const PhaseInputs& in, modes::ModeKind mode);

// The check phase of an exact reference (single-device training under `rule`), in this process.
ModeOutcome run_reference(const PhaseInputs& in, const modes::single::ReferenceRule& rule);

// One DDP rank's phases over `comm` (collective: every rank calls it). `on_phase` sees every step
// phase of both phases with run-wide step numbers (perf steps follow the checked ones).
ModeOutcome run_ddp_rank(const PhaseInputs& in, comm::Communicator& comm,
                         const std::function<void(int64_t step, modes::StepPhase)>& on_phase);

// One zero rank's phases, as run_ddp_rank's (modes/zero/zero_path.h).
ModeOutcome run_zero_rank(const PhaseInputs& in, comm::Communicator& comm,
                          const std::function<void(int64_t step, modes::StepPhase)>& on_phase);

// run_ddp_rank or run_zero_rank, by `mode` (one that runs per rank).
ModeOutcome run_rank_mode(const PhaseInputs& in, modes::ModeKind mode, comm::Communicator& comm,
                          const std::function<void(int64_t step, modes::StepPhase)>& on_phase);

}  // namespace ddpbench::training
