// reference_runs.h — the exact references a run's data-parallel modes are judged against
// (exact_reference.h), trained in this process, check phase only, once per distinct rule.
#pragma once

#include <vector>

#include "modes/single/single_path.h"
#include "training/mode_outcome.h"
#include "training/phase_inputs.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::training {

struct ReferenceOutcome {
  modes::single::ReferenceRule rule;
  ModeOutcome outcome;
};

// Trains every distinct non-plain exact reference the run's data-parallel modes need.
std::vector<ReferenceOutcome> run_exact_references(const PhaseInputs& in,
                                                   const torch::nn::Module& model);

}  // namespace ddpbench::training
