// exact_reference.h — what a data-parallel mode is judged against (Note [Exact per-rank reference]
// in docs/ARCHITECTURE.md). Plain single-device training when nothing per rank changes the
// mathematics; otherwise the exact reference: single-device training with the judged mode's
// per-rank structure (rank chunks, per-chunk BatchNorm statistics, the mode's loss rule), with the
// per-rank nonlinearities that make it necessary named in words for the report. Which reference a
// mode needs is decided here; reference_runs.h trains them.
#pragma once

#include <string>
#include <vector>

#include "modes/common/mode_kind.h"
#include "modes/single/single_path.h"
#include "training/run_setup.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::training {

struct ExactReference {
  modes::single::ReferenceRule rule;  // plain() when `causes` is empty
  // Why `mode` is not single-device training, e.g. "BatchNorm without SyncBN: 20 layers ...".
  std::vector<std::string> causes;
  std::string name() const;  // "single-device training" or "exact reference (...)"
};

// Note [Buffers updated in forward]: a model's forward may update a buffer in place before using
// it (a running mean of its input, as BatchNorm keeps its statistics). Under DDP every rank starts
// each forward from rank 0's buffers (broadcast_buffers), updates its own copy from its own
// samples and computes with it; DataParallel's replicas start from the module's buffers and
// replica 0's update is the module's. Single-device training updates once from the whole batch,
// which is another computation. The exact reference forwards each rank chunk on its own from the
// step's starting buffers and keeps chunk 0's (ReferenceRule::forward_chunk_by_chunk), for the
// buffers a TorchScript model's graph shows written in place (ScriptModelFacts::mutated_buffers).
// Without broadcast_buffers each rank's copy drifts from the others', which one model cannot
// hold: prepare_run refuses that.
ExactReference exact_reference_for(const RunSetup& setup, modes::ModeKind mode,
                                   const torch::nn::Module& model);

}  // namespace ddpbench::training
