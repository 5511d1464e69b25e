// child_process.h — run one child process to completion (used by `scale` to run each point as
// its own `ddpbench run`). The child dies with the parent.
#pragma once

#include <string>
#include <vector>

namespace ddpbench::launch {

// Runs argv (argv[0] a path), stdout discarded, stderr inherited; returns the exit code
// (128 + signal when killed).
int run_child(const std::vector<std::string>& argv);

}  // namespace ddpbench::launch
