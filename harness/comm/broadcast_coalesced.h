// broadcast_coalesced.h — broadcasts many small tensors as one message per dtype and device, as
// PyTorch's DDP syncs its buffers (_broadcast_coalesced): ResNet-18 has 60 BatchNorm buffers, and
// one collective per buffer costs a round trip each before every forward.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "comm/communicator.h"

namespace ddpbench::comm {

// In-place broadcast of every tensor from `root`, blocking; tensors of one dtype and device
// travel flattened into one buffer.
void broadcast_coalesced(Communicator& comm, const std::vector<at::Tensor>& tensors, int root);

}  // namespace ddpbench::comm
