// ddp_worker.h — one DDP rank's training loop: loads only its own slice of each step's global
// batch (DESIGN.md contract 1), trains through DistributedModel, checks after every step that all
// ranks hold bit-identical parameters and buffers, records the averaged gradients for the
// comparison, and applies injected faults.
#pragma once

#include <ATen/core/TensorBody.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "dist/communicator.h"
#include "metrics/step_statistics.h"
#include "modes/ddp/distributed_model.h"
#include "modes/fault_injection.h"
#include "modes/gradient_record.h"
#include "modes/model_state.h"
#include "scenarios/scenario.h"

namespace ddpbench::modes::ddp {

// Where a rank is inside a step; reported so a launcher can tell which rank stopped progressing.
enum class StepPhase {
  kData = 1,
  kForward = 2,
  kBackward = 3,
  kCommWait = 4,
  kOptimizer = 5,
  kDone = 6
};
const char* step_phase_name(StepPhase phase);

struct DdpWorkerOptions {
  int64_t steps = 1;
  at::ScalarType dtype = at::kFloat;
  DdpOptions ddp;
  std::optional<FaultSpec> fault;
  GradRecordKind grad_record = GradRecordKind::kFull;
  // Convert BatchNorm layers to SyncBN over the DDP communicator.
  bool sync_bn = false;
  // Perf phase after the checked steps: `warmup_steps` discarded, then `perf_steps` timed
  // without the checking work (gradient records, digests, loss allreduce).
  int64_t warmup_steps = 0;
  int64_t perf_steps = 0;
  std::function<void(int64_t step, StepPhase phase)> on_progress;
};

struct DdpWorkerResult {
  std::vector<double> losses;                      // global mean loss per step
  std::vector<std::vector<at::Tensor>> gradients;  // per step: averaged gradient records
  NamedTensors final_state;                        // this rank's
  std::vector<metrics::PhaseTimes> step_timings;   // check steps, max over ranks per phase
  std::vector<metrics::PhaseTimes> perf_timings;   // timed steps after warm-up, likewise
  int64_t bytes_per_step = 0;                      // gradient bytes reduced per rank per step
  int64_t num_buckets = 0;
  // Cross-rank bitwise agreement after each step; step -1 = always agreed.
  int64_t disagreement_step = -1;
  int64_t disagreement_rank = -1;
  std::string disagreement_tensor;
};

// Throws WorkerFailure naming the rank and step for a non-finite loss or an injected crash.
DdpWorkerResult run_ddp_worker(const scenarios::ScenarioSpec& spec,
                               scenarios::ScenarioInstance& instance,
                               const data::GlobalBatchPlan& plan, dist::Communicator& comm,
                               const DdpWorkerOptions& options);

// 64-bit digest of each parameter's bytes, for bitwise agreement checks without copying the
// state. Buffers are left out on purpose: under DDP each rank updates its BatchNorm statistics
// locally and they only agree again after the next forward's broadcast (PyTorch behaves the
// same). Names go to `names` when it is not null.
at::Tensor state_digests(const torch::nn::Module& module, std::vector<std::string>* names);

}  // namespace ddpbench::modes::ddp
