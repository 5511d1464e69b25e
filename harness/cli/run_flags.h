// run_flags.h — the flags of a training run as CLI11 options, one per row of the run options table
// (requests/run_options.h), which holds each flag's spelling, help and check. `run` adds all of
// them; `scale` adds the rows it shares (the training configuration every point of a sweep
// shares) next to its own --gpus list and --modes.
#pragma once

#include <CLI/App.hpp>

#include "requests/run_request.h"

namespace ddpbench::cli {

// The rows `scale` takes too: scenario, steps, batch, seed, dtype, data, output, threads,
// backend and DDP engine settings, warm-up, scaling kind, SyncBN, quiet, repeats.
void add_shared_run_flags(CLI::App& command, requests::RunRequest& request);

// Every row: the shared ones plus what only a single run has (--modes, --gpus, fault injection,
// gradient check kind, check-only/perf-only, extra outputs, checkpoints, evaluation).
void add_run_flags(CLI::App& command, requests::RunRequest& request);

}  // namespace ddpbench::cli
