// c10d_process_group.h — the c10d process group a communicator runs on, for code that drives
// c10d's own engine over it (the c10d Reducer of `--ddp-impl c10d`). Python's DDP reduces over the
// same default group its user's other collectives use; so does ddpbench: the Reducer's allreduces
// and ddpbench's checks share one group and one collective order, and the communicator's
// collectives_issued() counts both.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include "comm/communicator.h"

namespace ddpbench::comm {

// The group (PyTorch 2.x: a ProcessGroup with the gloo Backend set for CPU and CUDA tensors, as
// init_process_group("gloo") makes it). Null when `comm` is not built on c10d (shm, mpi, and
// ddpbench's own NCCL communicator).
c10::intrusive_ptr<c10d::ProcessGroup> c10d_process_group(Communicator& comm);

}  // namespace ddpbench::comm
