// sharded_optimizer.cpp — see sharded_optimizer.h.
#include "modes/zero/sharded_optimizer.h"

#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"

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

int64_t optimizer_state_bytes(torch::optim::Optimizer& local,
                              const std::vector<at::Tensor>& parameters) {
  int64_t bytes = 0;
  for (const at::Tensor& p : parameters) {
    for (const auto& [name, t] : scenarios::parameter_state(local, p)) {
      bytes += t.numel() * static_cast<int64_t>(t.element_size());
    }
  }
  return bytes;
}

ShardedOptimizer::ShardedOptimizer(std::vector<at::Tensor> parameters,
                                   const scenarios::OptimizerSpec& spec, comm::Communicator& comm)
    : parameters_(std::move(parameters)),
      comm_(comm),
      partition_(partition_of(parameters_, comm.world_size())) {
  local_ = scenarios::make_optimizer(spec, owned_parameters(parameters_, partition_, comm_.rank()));
}

ShardedOptimizer::~ShardedOptimizer() = default;

void ShardedOptimizer::step() {
  local_->step();
  broadcast_from_owners(parameters_, partition_, comm_);
}

int64_t ShardedOptimizer::state_bytes() {
  return optimizer_state_bytes(*local_, owned_parameters(parameters_, partition_, comm_.rank()));
}

}  // namespace ddpbench::modes::zero
