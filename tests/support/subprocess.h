// subprocess.h — run a program and capture its exit code, stdout and stderr. Tests use it to call
// the Python oracles in reference/ and to drive the real ddpbench binary end to end.
#pragma once

#include <string>
#include <vector>

namespace ddpbench::testing {

struct ProcessResult {
  int exit_code = -1;   // 128 + signal when killed by a signal
  int pid = -1;         // the process's id, which names what it left (shm_segments_of)
  bool forked = false;  // started by the suite's fork server (fork_client.h), not exec'd here
  std::string out;
  std::string err;
};

// argv[0] is looked up in PATH. Extra environment entries are "NAME=value".
//
// A test must end with a message, not at ctest's timeout with none (the fault matrix once sat
// silent for 900 s in a loaded suite): a child still running after `limit_s` is sent SIGTERM,
// then SIGKILL 5 s later, and one that exited while a process it left holds its stdout or stderr
// open is not waited for beyond 10 s. Either way err ends with a line saying so, which the test's
// own expectation then shows.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {}, int limit_s = 480);

// A child already started: its pid, the read ends of its stdout and stderr, and where its wait
// status comes from: waitpid when it is this process's own child (status_socket -1), else a
// 32-bit wait status read from a fork server's connection (fork_client.h).
struct StartedChild {
  int pid = -1;
  int out = -1;
  int err = -1;
  int status_socket = -1;
};

// Drains a started child's output until it ends, under run_process's limits, and closes its fds.
ProcessResult wait_for(const StartedChild& child, int limit_s);

// Number of lines in s (a trailing newline does not start a new line).
int count_lines(const std::string& s);
// Number of (possibly overlapping) occurrences of `needle` in `text`.
int count_occurrences(const std::string& text, const std::string& needle);

// A fresh empty directory under the build tree's test area; removed by the caller if wanted.
std::string make_temp_dir(const std::string& tag);

}  // namespace ddpbench::testing
