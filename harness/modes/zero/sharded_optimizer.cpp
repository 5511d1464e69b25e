// sharded_optimizer.cpp — see sharded_optimizer.h.
#include "modes/zero/sharded_optimizer.h"

#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"
#include "modes/common/layout_view.h"

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

std::vector<at::Tensor> pack_by_owner(const std::vector<at::Tensor>& parameters,
                                      const ZeroPartition& partition) {
  for (const at::Tensor& p : parameters) {
    if (p.scalar_type() != parameters.front().scalar_type() ||
        p.device() != parameters.front().device()) {
      return {};
    }
  }
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> packed;
  for (size_t rank = 0; rank < partition.rank_params.size(); ++rank) {
    if (partition.rank_params[rank].empty()) {
      packed.emplace_back();
      continue;
    }
    at::Tensor flat = at::empty({partition.rank_numel[rank]}, parameters.front().options());
    int64_t offset = 0;
    for (const int64_t i : partition.rank_params[rank]) {
      at::Tensor p = parameters[static_cast<size_t>(i)];
      at::Tensor view = view_in_layout_of(flat.narrow(0, offset, p.numel()), p);
      view.copy_(p);
      p.set_data(view);
      offset += p.numel();
    }
    packed.push_back(flat);
  }
  return packed;
}

void broadcast_from_owners(const std::vector<at::Tensor>& parameters,
                           const ZeroPartition& partition, comm::Communicator& comm,
                           const std::vector<at::Tensor>& packed) {
  torch::NoGradGuard no_grad;
  for (int owner = 0; owner < comm.world_size(); ++owner) {
    if (!packed.empty()) {
      if (packed[static_cast<size_t>(owner)].defined()) {
        comm.broadcast({packed[static_cast<size_t>(owner)]}, owner);
      }
      continue;
    }
    std::vector<at::Tensor> tensors = owned_parameters(parameters, partition, owner);
    if (!tensors.empty()) comm::broadcast_coalesced(comm, tensors, owner);
  }
}

}  // namespace ddpbench::modes::zero
