// consolidated_state.cpp — see consolidated_state.h.
#include "modes/zero/consolidated_state.h"

#include <torch/torch.h>

#include "modes/ranks/state_broadcast.h"
#include "modes/zero/sharded_optimizer.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::zero {

std::unique_ptr<torch::optim::Optimizer> consolidate_optimizer(
    const std::vector<at::Tensor>& model_parameters, const std::vector<std::string>& model_names,
    const std::vector<at::Tensor>& partitioned, const ZeroPartition& partition,
    torch::optim::Optimizer& local, const scenarios::OptimizerSpec& spec,
    comm::Communicator& comm) {
  std::unique_ptr<torch::optim::Optimizer> full =
      scenarios::make_optimizer(spec, model_parameters, model_names);
  for (int owner = 0; owner < comm.world_size(); ++owner) {
    const std::vector<at::Tensor> owned = owned_parameters(partitioned, partition, owner);
    if (owned.empty()) continue;
    std::vector<scenarios::ParameterState> states(owned.size());
    if (owner == comm.rank()) {
      for (size_t i = 0; i < owned.size(); ++i) {
        for (const auto& [name, t] : scenarios::parameter_state(local, owned[i])) {
          states[i].emplace(name, t.detach().to(at::kCPU, /*non_blocking=*/false, /*copy=*/true));
        }
      }
    }
    ranks::broadcast_parameter_states(comm, owner, owned, states);
    for (size_t i = 0; i < owned.size(); ++i) {
      scenarios::ParameterState placed;
      for (const auto& [name, t] : states[i]) {
        placed.emplace(name, t.to(owned[i].device(), /*non_blocking=*/false, /*copy=*/true));
      }
      scenarios::set_parameter_state(*full, owned[i], placed);
    }
  }
  return full;
}

}  // namespace ddpbench::modes::zero
