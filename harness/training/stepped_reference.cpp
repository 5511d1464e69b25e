// stepped_reference.cpp — see stepped_reference.h.
#include "training/stepped_reference.h"

#include <torch/torch.h>

#include "modes/common/step_loop.h"

namespace ddpbench::training {

struct SteppedReference::Parts {
  Parts(const PhaseInputs& in, std::shared_ptr<const scenarios::ScenarioSpec> trained,
        const modes::single::ReferenceRule& rule, const modes::TrainOptions& options)
      : spec(std::move(trained)),
        instance(scenarios::instantiate_model(*spec, in.setup.request, in.dataset)),
        path(modes::single::make_single_path(*spec, instance, in.context, rule)),
        inputs{*spec, *in.dataset, in.plan, in.context, in.on_device},
        loop(*path, inputs, options) {}

  std::shared_ptr<const scenarios::ScenarioSpec> spec;  // outlives the path and the loop
  scenarios::ScenarioInstance instance;
  std::unique_ptr<modes::GradientPath> path;
  modes::TrainInputs inputs;
  modes::StepLoop loop;
};

modes::TrainOptions SteppedReference::base_options(const RunSetup& setup) {
  modes::TrainOptions o;
  o.checking = false;
  o.first_step = setup.first_step();
  return o;
}

SteppedReference::SteppedReference(const PhaseInputs& in,
                                   std::shared_ptr<const scenarios::ScenarioSpec> spec,
                                   const modes::single::ReferenceRule& rule,
                                   const modes::TrainOptions& options)
    : parts_(std::make_unique<Parts>(in, std::move(spec), rule, options)) {}

SteppedReference::~SteppedReference() = default;

modes::StepLoop& SteppedReference::loop() { return parts_->loop; }

}  // namespace ddpbench::training
