// run_setup.h — a validated `ddpbench run`, as every phase of every mode reads it: the request
// resolved against the scenario's defaults and checked once (run/resolve_run.h), before anything
// runs, by the launching parent and by every rank alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/backend_support.h"
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "modes/common/fault_injection.h"
#include "modes/common/mode_kind.h"
#include "modes/ddp/distributed_model.h"
#include "runtime/execution_context.h"
#include "scenarios/registry.h"
#include "scenarios/scenario.h"

namespace ddpbench::training {

struct RunSetup {
  const scenarios::ScenarioSpec* spec = nullptr;
  std::vector<modes::ModeKind> modes;
  int64_t steps = 0;
  int64_t global_batch = 0;
  int64_t seed = 0;
  bool drop_last = false;  // the sampler's: --drop-last or the scenario's
  int64_t world_size = 1;
  // dtype, intra-op threads and numerics of every process of the run.
  runtime::ContextRequest context;
  scenarios::BuildRequest request;
  comm::Backend backend = comm::default_backend();
  std::string master_addr;
  bool share_gpus = false;  // several ranks/replicas may share a CUDA device
  std::chrono::milliseconds timeout{0};
  modes::ddp::DdpOptions ddp;
  std::optional<modes::FaultSpec> fault;
  std::string grad_check;  // "auto", "full", "fingerprint"
  // Data-parallel modes start every checked step from their reference's state
  // (training/lockstep.h); their state files are then the state after the last lockstep step.
  bool lockstep = false;
  bool sync_bn = false;      // DDP converts BatchNorm to SyncBN
  int64_t check_steps = 0;   // steps of the check phase (0 with --perf-only)
  int64_t perf_steps = 0;    // timed steps of the perf phase (0 with --check-only)
  int64_t warmup_steps = 0;  // discarded before the timed steps
  bool strong_scaling = false;
  bool progress = false;  // draw a progress line (stdout is a TTY and no --quiet)
  bool export_batches = false;
  bool bisect = false;  // re-run a failing run in float64 (run/bisect.h)
  std::string out;

  bool has_mode(modes::ModeKind mode) const { return modes::has_mode(modes, mode); }
  // "float32" or "float64".
  const char* dtype_name() const;
};

// The run's plan over `dataset`: the scenario's sampler settings and seed, `replicas` ranks and
// `global_batch` samples per step.
data::GlobalBatchPlan make_plan(const RunSetup& setup, const data::Dataset& dataset,
                                int64_t replicas, int64_t global_batch);

}  // namespace ddpbench::training
