// scenario.cpp — see scenario.h.
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioInstance instantiate(const ScenarioSpec& spec, const BuildRequest& request) {
  ScenarioInstance instance;
  instance.dataset = spec.build_dataset(request);
  instance.model = spec.build_model(request.seed);
  return instance;
}

}  // namespace ddpbench::scenarios
