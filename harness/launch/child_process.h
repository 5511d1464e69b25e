// child_process.h — run this program again, or another build of it, as one child process, to
// completion (used by `scale` to run each point as its own `ddpbench run`, by --bisect, and by
// `gate --ab` to run the baseline and current builds in turn). The child dies with the parent.
#pragma once

#include <string>
#include <vector>

namespace ddpbench::launch {

// Runs this program again with argv (argv[0] is the name ps shows), stdout discarded, stderr
// inherited; returns the exit code (128 + signal when killed). A signal meanwhile stops it
// (signal_cleanup.h), and the child, a nested run (kNestedEnv), leaves the saying to us. Its
// TMPDIR is `tmpdir`, a private folder of ours, so what it keeps there (its workers' folder)
// goes with ours even when it is killed outright.
int run_self(const std::vector<std::string>& argv, const std::string& tmpdir);

// As run_self, but runs `binary` (a ddpbench, maybe another build), with its stdout and stderr
// both written to `log_path` (empty: stdout discarded and stderr inherited, as run_self does).
int run_program(const std::string& binary, const std::vector<std::string>& argv,
                const std::string& tmpdir, const std::string& log_path);

// This process's environment with `overrides` ("NAME=value") in place of the entries of the same
// names: what a child this process starts is given.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides);

// The path of this program's binary (/proc/self/exe resolved): children run from it, so their
// process name is the binary's rather than "exe".
std::string self_executable();

}  // namespace ddpbench::launch
