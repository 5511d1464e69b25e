// run_command.h — `ddpbench run`: train one scenario in the selected modes, compare every mode
// with single-device training, write report.json and the final state of each mode to --out.
// The same command is what spawned workers (and torchrun / srun / mpirun ranks) execute: the
// launch environment decides whether this process launches or joins.
#pragma once

#include <CLI/App.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/registry.h"

namespace ddpbench::cli {

struct RunCommandOptions {
  // Scenario name (see `ddpbench list`).
  std::string scenario = scenarios::kDefaultScenario;
  // Comma-separated modes (single, dp, ddp); empty = single,ddp with --gpus > 1, else single.
  std::vector<std::string> modes;
  // Training steps; 0 = the scenario's default.
  int64_t steps = 0;
  // Global batch size (all ranks together); 0 = the scenario's default.
  int64_t batch_size = 0;
  // Seed for model init, sampler shuffle and augmentation; -1 = the scenario's default.
  int64_t seed = -1;
  // float32 or float64 (double exposes algorithmic differences that float32 rounding hides).
  std::string dtype;  // empty = the scenario's default
  // Dataset directory; empty = the scenario's default data.
  std::string data_dir;
  // Output directory for report.json and state_<mode>.pt.
  std::string out = "ddpbench_out";
  // Intra-op threads per process; 0 = cores / ranks (at least 1).
  int64_t threads = 0;
  // World size K: DDP ranks (one process per device; CPU ranks when there is no GPU).
  int64_t gpus = 1;
  // Collective backend: gloo (CPU), mpi (under mpirun), nccl (CUDA).
  std::string backend = "gloo";
  // Address the spawned workers rendezvous on.
  std::string master_addr = "127.0.0.1";
  // Seconds a rank may go without progress (per step) before the run is stopped.
  double timeout = 300;
  // DDP gradient reduction: bucketed (overlapping, PyTorch's design) or naive.
  std::string ddp_impl = "bucketed";
  // Bucket cap and first bucket size in MiB (PyTorch: 25 and 1).
  double bucket_cap_mb = 25;
  double first_bucket_mb = 1;
  // Broadcast rank 0's buffers before every forward (PyTorch's broadcast_buffers).
  bool no_broadcast_buffers = false;
  // Reduce parameters that got no gradient as zeros (PyTorch's find_unused_parameters).
  bool find_unused_parameters = false;
  // DDP communication hook: allreduce, fp16, bf16.
  std::string comm_hook = "allreduce";
  // Deliberate fault, KIND:rank=R,step=S[,eps=E][,tensor=NAME].
  std::string inject_fault;
  // Gradient comparison: auto, full, fingerprint.
  std::string grad_check = "auto";
  // Perf phase: warm-up steps discarded before the --steps timed steps.
  int64_t warmup = 2;
  // Run only the correctness checks, or only the perf phase (default: both).
  bool check_only = false;
  bool perf_only = false;
  // Scaling efficiency against single-device training at the same GLOBAL batch (strong
  // scaling) instead of the same per-device batch (weak scaling, the default).
  bool strong = false;
  // Convert BatchNorm to SyncBN under DDP (scenarios like resnet18_syncbn do it by default).
  bool sync_bn = false;
  // No progress line even on a terminal.
  bool quiet = false;
  // Also write batches.pt (initial state + every step's global batch) for torch_ddp_oracle.py.
  bool export_batches = false;
};

CLI::App* add_run_command(CLI::App& app, RunCommandOptions& options);
int run_run_command(const RunCommandOptions& options, const scenarios::ScenarioRegistry& registry,
                    const std::vector<std::string>& argv);

}  // namespace ddpbench::cli
