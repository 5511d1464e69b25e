// mode_phases.h — the two phases of every mode. The check phase trains a fresh model on the run's
// plan with every step checked (losses, gradients, final state); the perf phase trains another
// fresh model for --warmup + --steps steps and keeps the timed steps' phase times. Single and DP
// run in this process (here); DDP and zero run on every rank (training/rank_phases.h), and rank
// 0's outcome is reported.
#pragma once

#include "modes/common/gradient_record.h"
#include "modes/single/single_path.h"
#include "training/mode_outcome.h"
#include "training/phase_inputs.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// --grad-check auto|full|fingerprint resolved for this model.
modes::GradRecordKind resolve_grad_record(const RunSetup& setup, const torch::nn::Module& model);

// single or dp, in this process; a progress line per phase when the setup asks for one.
ModeOutcome run_local_mode(const PhaseInputs& in, modes::ModeKind mode);

// The check phase of an exact reference (single-device training under `rule`), in this process.
ModeOutcome run_reference(const PhaseInputs& in, const modes::single::ReferenceRule& rule);

}  // namespace ddpbench::training
