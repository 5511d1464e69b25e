// reference_runs.cpp — see reference_runs.h.
#include "training/reference_runs.h"

#include <torch/torch.h>

#include "training/exact_reference.h"
#include "training/mode_phases.h"

namespace ddpbench::training {

using modes::ModeKind;

std::vector<ReferenceOutcome> run_exact_references(const PhaseInputs& in,
                                                   const torch::nn::Module& model) {
  std::vector<ReferenceOutcome> out;
  if (in.setup.check_steps == 0) return out;
  for (ModeKind mode : in.setup.modes) {
    const ExactReference ref = exact_reference_for(in.setup, mode, model);
    if (ref.rule.plain()) continue;
    bool known = false;
    for (const auto& r : out) known = known || r.rule == ref.rule;
    if (!known) out.push_back({ref.rule, run_reference(in, ref.rule)});
  }
  return out;
}

}  // namespace ddpbench::training
