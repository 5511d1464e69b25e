// randn_regression.h — the regression data of the linear scenarios: `samples` rows of randn(10)
// inputs and randn(10) targets drawn from a local generator seeded with the run's seed (the same
// first draws as torch.manual_seed(seed) in Python; the global generator stays free for the
// model's init).
#pragma once

#include <cstdint>
#include <memory>

#include "data/dataset.h"

namespace ddpbench::scenarios {

std::shared_ptr<const data::Dataset> make_randn_regression(int64_t samples, int64_t seed);

}  // namespace ddpbench::scenarios
