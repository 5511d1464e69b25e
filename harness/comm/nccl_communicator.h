// nccl_communicator.h — Communicator over NCCL, one CUDA device per rank, with rendezvous through a
// comm::Store. Device tensors go to NCCL directly on its own stream, ordered against the caller's
// stream by events; CPU tensors are staged through device memory. Built from nccl_communicator.cpp
// when CUDA + NCCL are found, otherwise from nccl_communicator_none.cpp, which refuses with an
// InputError.
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "comm/store.h"

namespace ddpbench::comm {

// Collective over the ranks that share `store`: every rank of the job calls it. Uses CUDA device
// `cuda_device`, or the calling thread's current device when it is -1 (a rank's execution context
// made its device current). Throws ddpbench::InputError when there is no usable CUDA device (or the
// build has no CUDA/NCCL), std::runtime_error when NCCL fails to initialize.
std::unique_ptr<Communicator> make_nccl_communicator(const std::shared_ptr<Store>& store, int rank,
                                                     int world_size, int cuda_device = -1);

}  // namespace ddpbench::comm
