// used_parameters.h — which trained parameters this rank's backward reached this step, and which
// some rank's did. A parameter that no rank's backward reached keeps no gradient (.grad None), as
// under DDP with find_unused_parameters, so that the optimizer skips it as single-device training
// does; one that only some ranks reached is reduced with zeros from the others. Which is which
// takes one small allreduce of the ranks' maps per step, started beside the gradients' reduction.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace ddpbench::modes::zero {

class UsedParameters {
 public:
  // Until the first map is agreed, every parameter counts as used somewhere.
  explicit UsedParameters(size_t count) : here_(count, 0), anywhere_(count, 1) {}

  void mark(size_t index, bool used) { here_[index] = used ? 1 : 0; }

  // Collective: starts the sum of the ranks' maps (on `device`); finish() once it is done.
  std::shared_ptr<comm::Work> start(comm::Communicator& comm, const at::Device& device);
  void finish();

  bool anywhere(size_t index) const { return anywhere_[index] != 0; }

 private:
  std::vector<char> here_;      // this rank has a gradient for it this step
  std::vector<char> anywhere_;  // some rank has (so it is reduced, not None)
  at::Tensor map_;              // the sum in flight
};

}  // namespace ddpbench::modes::zero
