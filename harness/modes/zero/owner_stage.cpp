// owner_stage.cpp — see owner_stage.h.
#include "modes/zero/owner_stage.h"

#include <ATen/ATen.h>

#include "modes/zero/sharded_optimizer.h"

namespace ddpbench::modes::zero {

OwnerStage::OwnerStage(ZeroShared& shared) : ZeroStage(shared) {
  packed_ = pack_by_owner(shared_.params, shared_.partition);
}

std::vector<at::Tensor> OwnerStage::optimizer_parameters() const {
  return owned_parameters(shared_.params, shared_.partition, shared_.mesh.shard().rank());
}

void OwnerStage::after_step(bool gather_fault) {
  const int rank = shared_.mesh.shard().rank();
  std::vector<at::Tensor> stale;  // gather fault: the others' parameters before the broadcasts
  if (gather_fault) {
    for (size_t i = 0; i < shared_.params.size(); ++i) {
      const bool own = shared_.partition.owner[i] == rank;
      stale.push_back(own ? at::Tensor() : shared_.params[i].clone());
    }
  }
  broadcast_from_owners(shared_.params, shared_.partition, shared_.mesh.shard(), packed_);
  for (size_t i = 0; i < stale.size(); ++i) {
    if (stale[i].defined()) shared_.params[i].copy_(stale[i]);
  }
}

int64_t OwnerStage::first_owned_parameter() const {
  const std::vector<int64_t>& mine =
      shared_.partition.rank_params[static_cast<size_t>(shared_.mesh.shard().rank())];
  return mine.empty() ? -1 : mine.front();
}

}  // namespace ddpbench::modes::zero
