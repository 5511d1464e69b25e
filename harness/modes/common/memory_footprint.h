// memory_footprint.h — what one process holds for training, measured from its live tensors (not
// computed from the model's size): the bytes of the module's parameters, of their gradients as
// they are after the step's reduction (zero stage 2 frees the ones it does not own), and of the
// optimizer's state (a zero rank's optimizer holds only its own parameters'); and the process's
// peak resident set size so far (getrusage). Sharded data parallel exists to shrink the first
// three per rank; the report shows them beside DDP's.
#pragma once

#include <cstdint>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ddpbench::modes {

struct MemoryFootprint {
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t optimizer_state_bytes = 0;
  int64_t peak_rss_bytes = 0;
};

// The optimizer must be one make_optimizer builds (scenarios/training_recipe.h).
MemoryFootprint measure_footprint(const torch::nn::Module& module,
                                  torch::optim::Optimizer& optimizer);

}  // namespace ddpbench::modes
