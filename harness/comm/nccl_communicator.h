// nccl_communicator.h — Communicator over NCCL, one CUDA device per rank, with rendezvous through a
// comm::Store. ddpbench's tensors are CPU tensors (CPU libtorch), so every collective stages them
// through device memory. Built from nccl_communicator.cpp when CUDA + NCCL are found, otherwise
// from nccl_communicator_none.cpp, which refuses with an InputError.
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "comm/store.h"

namespace ddpbench::comm {

// Collective over the ranks that share `store`: every rank of the job calls it. Uses CUDA device
// rank % device_count. Throws ddpbench::InputError when there is no usable CUDA device (or the
// build has no CUDA/NCCL), std::runtime_error when NCCL fails to initialize.
std::unique_ptr<Communicator> make_nccl_communicator(const std::shared_ptr<Store>& store, int rank,
                                                     int world_size);

}  // namespace ddpbench::comm
