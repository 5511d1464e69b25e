// host_staging.h — lets a host-only backend (ddpbench's OpenMPI communicator: OpenMPI is not
// assumed CUDA-aware) take device tensors: each collective copies a device tensor to the host,
// runs there and copies the result back. CPU tensors pass straight through. gloo needs none of
// this (c10d's ProcessGroupGloo stages CUDA tensors itself); NCCL works on device memory.
#pragma once

#include <memory>

#include "comm/communicator.h"

namespace ddpbench::comm {

std::unique_ptr<Communicator> with_host_staging(std::unique_ptr<Communicator> inner);

}  // namespace ddpbench::comm
