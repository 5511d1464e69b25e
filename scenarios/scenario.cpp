// scenario.cpp — see scenario.h.
#include "scenarios/scenario.h"

#include "scenarios/memory_format.h"

namespace ddpbench::scenarios {

ScenarioInstance instantiate(const ScenarioSpec& spec, const BuildRequest& request) {
  ScenarioInstance instance;
  instance.dataset = spec.build_dataset(request);
  instance.model = fresh_model(spec, request.seed);
  return instance;
}

ScenarioInstance instantiate_model(const ScenarioSpec& spec, const BuildRequest& request,
                                   std::shared_ptr<const data::Dataset> dataset) {
  ScenarioInstance instance;
  instance.dataset = std::move(dataset);
  instance.model = fresh_model(spec, request.seed);
  return instance;
}

}  // namespace ddpbench::scenarios
