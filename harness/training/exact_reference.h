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

ExactReference exact_reference_for(const RunSetup& setup, modes::ModeKind mode,
                                   const torch::nn::Module& model);

}  // namespace ddpbench::training
