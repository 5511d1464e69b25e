// state_broadcast.h — optimizer state from one rank to all: per parameter, the state entries under
// PyTorch's names (scenarios/optim/optimizer_state.h). Lockstep sends the reference's state from
// rank 0 before every step (training/lockstep.h); zero gathers each shard's state from its owner
// into a plain optimizer's for a checkpoint (modes/zero/consolidated_state.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "comm/communicator.h"
#include "scenarios/optim/optimizer_state.h"

namespace ddpbench::modes::ranks {

// Collective: `states[i]`, the state of `params[i]` (host tensors), from `root` to every rank.
// First which entries exist (one bit per scenarios::state_names() entry, one int64 per
// parameter), then every entry in place, after the `leading` tensors, in one broadcast; receivers
// get entries created with empty_state_entry (host) and lose the ones root has not.
void broadcast_parameter_states(comm::Communicator& comm, int root,
                                const std::vector<at::Tensor>& params,
                                std::vector<scenarios::ParameterState>& states,
                                std::vector<at::Tensor> leading = {});

}  // namespace ddpbench::modes::ranks
