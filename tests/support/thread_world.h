// thread_world.h — runs N ranks as threads of one process, each with a real communicator over a
// local TCPStore (gloo's own test style), so collective code is tested for real without spawning
// processes. Exceptions thrown on any rank are rethrown on the calling thread.
#pragma once

#include <functional>
#include <string>

#include "comm/communicator.h"

namespace ddpbench::testing {

// `backend`: gloo, or nccl (one CUDA device per rank, rank % device count).
void run_ranks(int world_size, const std::function<void(comm::Communicator& comm)>& body,
               const std::string& backend = "gloo");

}  // namespace ddpbench::testing
