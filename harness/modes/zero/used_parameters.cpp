// used_parameters.cpp — see used_parameters.h.
#include "modes/zero/used_parameters.h"

#include <ATen/ATen.h>

namespace ddpbench::modes::zero {

std::shared_ptr<comm::Work> UsedParameters::start(comm::Communicator& comm,
                                                  const at::Device& device) {
  map_ = at::zeros({static_cast<int64_t>(here_.size())}, at::kFloat);
  float* m = map_.data_ptr<float>();
  for (size_t i = 0; i < here_.size(); ++i) m[i] = here_[i] != 0 ? 1.0F : 0.0F;
  map_ = map_.to(device);
  return comm.allreduce_sum(map_);
}

void UsedParameters::finish() {
  const at::Tensor host = map_.cpu();
  const float* m = host.data_ptr<float>();
  for (size_t i = 0; i < anywhere_.size(); ++i) anywhere_[i] = m[i] > 0 ? 1 : 0;
  map_ = at::Tensor();
}

}  // namespace ddpbench::modes::zero
