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

// In-place broadcast of every tensor's values from `root`, blocking, whatever each rank's memory
// layout: a communicator sends a tensor's memory as it lies, so a channels_last tensor on the root
// (MODEL.CHANNELS_LAST: the lockstep reference's weights) received into a contiguous one (zero's
// weights, views into its flat shards) would arrive permuted. A tensor that is not contiguous
// travels as a contiguous copy and is copied back.
void broadcast_values(Communicator& comm, const std::vector<at::Tensor>& tensors, int root);

}  // namespace ddpbench::comm
