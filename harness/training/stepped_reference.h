// stepped_reference.h — a reference model that whoever judges a mode step by step advances one
// step at a time: the lockstep driver (the mode's exact reference, from which every judged step
// starts) and the float32 shadow (the same reference with --amp off, from the mode's own state).
// It owns its scenario instance, its single-device path with the reference's rule and a step
// loop that records nothing: the caller reads and loads its state around each step.
#pragma once

#include <memory>

#include "modes/single/single_path.h"
#include "training/phase_inputs.h"

namespace ddpbench::modes {
class StepLoop;
struct TrainOptions;
}  // namespace ddpbench::modes

namespace ddpbench::training {

class SteppedReference {
 public:
  // The options every stepped reference starts from: nothing recorded (the caller compares),
  // starting at the run's first step (--resume: from the checkpoint, as the judged mode).
  static modes::TrainOptions base_options(const RunSetup& setup);

  // `spec` is the scenario it trains (the run's, or a variant such as --amp off); it builds the
  // run's initial model of that scenario.
  SteppedReference(const PhaseInputs& in, std::shared_ptr<const scenarios::ScenarioSpec> spec,
                   const modes::single::ReferenceRule& rule, const modes::TrainOptions& options);
  ~SteppedReference();

  modes::StepLoop& loop();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace ddpbench::training
