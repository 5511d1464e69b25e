// run_flags.h — the flags of a training run, each defined once with one description. `run` adds
// all of them; `scale` adds the shared ones (the training configuration every point of a sweep
// shares) next to its own --gpus list and --modes. command_line() writes a RunRequest back as the
// flags that reproduce it — how `scale` starts its points — so each flag's spelling lives only in
// this file.
#pragma once

#include <CLI/App.hpp>
#include <string>
#include <vector>

#include "requests/run_request.h"

namespace ddpbench::cli {

// Scenario, steps, batch, seed, dtype, data, output, threads, backend and DDP engine settings,
// warm-up, scaling kind, SyncBN, quiet: what `run` and `scale` mean the same way.
void add_shared_run_flags(CLI::App& command, run::RunRequest& request);

// The shared flags plus what only a single run has: --modes, --gpus, fault injection, gradient
// check kind, check-only/perf-only and batch export.
void add_run_flags(CLI::App& command, run::RunRequest& request);

// "/proc/self/exe run --scenario ... ": the command line that executes `request`. Only fields
// that differ from "unset" are written, so the child applies the same defaults.
std::vector<std::string> command_line(const run::RunRequest& request);

}  // namespace ddpbench::cli
