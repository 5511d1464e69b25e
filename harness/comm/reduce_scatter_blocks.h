// reduce_scatter_blocks.h — what every backend's reduce_scatter_sum shares: the block each rank
// keeps, with the refusal of a size that does not split (before anything is sent), and the
// emulation for backends without a reduce-scatter of their own (shm): an allreduce of a copy of
// the whole input, of which each rank keeps its block.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "comm/communicator.h"

namespace ddpbench::comm {

// Elements per rank; throws std::invalid_argument naming `backend` when numel does not split
// into `world_size` equal blocks.
int64_t reduce_scatter_block(const at::Tensor& input, int world_size, const char* backend);

// reduce_scatter_sum through comm.allreduce_sum (one collective, counted as such).
at::Tensor reduce_scatter_by_allreduce(Communicator& comm, const at::Tensor& input,
                                       const char* backend);

}  // namespace ddpbench::comm
