// thread_world.h — runs N ranks as threads of one process, each with a real gloo communicator
// over a local TCPStore (gloo's own test style), so collective code is tested for real without
// spawning processes. Exceptions thrown on any rank are rethrown on the calling thread.
#pragma once

#include <functional>

#include "dist/communicator.h"

namespace ddpbench::testing {

void run_ranks(int world_size, const std::function<void(dist::Communicator& comm)>& body);

}  // namespace ddpbench::testing
