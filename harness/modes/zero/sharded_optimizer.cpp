// sharded_optimizer.cpp — see sharded_optimizer.h.
#include "modes/zero/sharded_optimizer.h"

#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"

namespace ddpbench::modes::zero {

ZeroPartition partition_of(const std::vector<at::Tensor>& parameters, int64_t world_size) {
  std::vector<int64_t> numels;
  numels.reserve(parameters.size());
  for (const at::Tensor& p : parameters) numels.push_back(p.numel());
  return partition_parameters({numels}, world_size);
}

std::vector<at::Tensor> owned_parameters(const std::vector<at::Tensor>& parameters,
                                         const ZeroPartition& partition, int rank) {
  std::vector<at::Tensor> owned;
  for (const int64_t i : partition.rank_params[static_cast<size_t>(rank)]) {
    owned.push_back(parameters[static_cast<size_t>(i)]);
  }
  return owned;
}

void broadcast_from_owners(const std::vector<at::Tensor>& parameters,
                           const ZeroPartition& partition, comm::Communicator& comm) {
  torch::NoGradGuard no_grad;
  for (int owner = 0; owner < comm.world_size(); ++owner) {
    std::vector<at::Tensor> tensors = owned_parameters(parameters, partition, owner);
    if (!tensors.empty()) comm::broadcast_coalesced(comm, tensors, owner);
  }
}

}  // namespace ddpbench::modes::zero
