// thread_world.h — runs N ranks as threads of one process, each with a real communicator over a
// local TCPStore (gloo's own test style), so collective code is tested for real without spawning
// processes. Exceptions thrown on any rank are rethrown on the calling thread.
#pragma once

#include <functional>
#include <string>

#include "comm/backend_support.h"
#include "comm/communicator.h"

namespace ddpbench::testing {

// `backend`: one that meets through a store (not an MPI launcher's); a device-memory one (nccl)
// puts rank r on CUDA device r (callers ask for at most the device count).
void run_ranks(int world_size, const std::function<void(comm::Communicator& comm)>& body,
               comm::Backend backend = comm::Backend::kGloo);

}  // namespace ddpbench::testing
