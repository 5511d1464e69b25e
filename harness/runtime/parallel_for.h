// parallel_for.h — runs fn(i) for i in [0, n) each on its own thread and waits for all of them:
// how one process drives several replicas, or loads their data, at once. The first failure is
// rethrown on the calling thread after every thread has finished.
#pragma once

#include <cstdint>
#include <functional>

namespace ddpbench::runtime {

// n == 1 runs on the calling thread.
void parallel_for(int64_t n, const std::function<void(int64_t i)>& fn);

}  // namespace ddpbench::runtime
