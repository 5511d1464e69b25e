// fork_client.h — runs the ddpbench binary as a forked child of the suite's fork server
// (harness/launch/fork_server.h), which it starts when no server serves this build of the binary
// yet: the test sees the same argv, environment, working directory, stdio, exit code and pid as
// from an exec, without libtorch's 0.45 s start-up each time.
//
// It execs the binary instead (run_process) when the server cannot be started or reached, when it
// refuses the request (an environment a library reads while loading differs from the server's),
// or when DDPBENCH_TEST_START=exec: the switch to measure the suite both ways or to rule the
// server out. Tests of start-up, and of signals a shell sends to a run, exec the binary directly
// (Note [Tests fork ddpbench]).
#pragma once

#include <string>
#include <vector>

#include "support/subprocess.h"

namespace ddpbench::testing {

inline constexpr const char* kTestStartEnv = "DDPBENCH_TEST_START";

// As run_process, for argv[0] the ddpbench binary; ProcessResult::forked says which way it ran.
ProcessResult run_forked(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env = {}, int limit_s = 480);

}  // namespace ddpbench::testing
