// synthetic_data.h — `ddpbench run --model net.pt --input-shape 3,32,32 --num-classes 10`: a
// model that comes without data trains on synthetic tensors of the declared shape
// (data/synthetic_tensors.h), keyed like the built-in datasets, so every mode, rank and replica
// sees the same global batches. The scenario still gives the optimizer, batch, steps and
// tolerances; the loss follows the targets unless --loss names one (scenario_config.h).
#pragma once

#include "scenarios/scenario.h"

namespace ddpbench::inputs {

// `spec` training on spec.synthetic's data: the training split is DATA.SAMPLES samples, and a
// classifier's held-out split is a disjoint key range of the same stream, so the evaluation pass
// compares the modes' predictions (on random labels: the accuracy itself means nothing).
scenarios::ScenarioSpec with_synthetic_data(scenarios::ScenarioSpec spec);

}  // namespace ddpbench::inputs
