// step_loop.h — the one training loop of every mode. Per step it seeks the plan, collates the
// samples the mode asks for (one thread per shard), places them (execution context), zeroes the
// gradients, lets the mode's gradient path run forward, backward and its reduction, steps the
// optimizer (the scenario's, shared by design), times each phase, refuses a non-finite loss and
// reports progress — progress and gradient records outside the timed region in every mode.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "metrics/step_statistics.h"
#include "modes/common/gradient_path.h"
#include "modes/common/gradient_record.h"
#include "modes/common/model_state.h"
#include "modes/common/step_batches.h"
#include "modes/common/step_trace.h"
#include "modes/common/training_state.h"
#include "runtime/execution_context.h"
#include "runtime/phase_timer.h"
#include "scenarios/scenario.h"

namespace torch::optim {
class Optimizer;
}
namespace ddpbench::scenarios {
class GradScaler;
}

namespace ddpbench::modes {

// Where a process is inside a step; a launcher watches these to tell which rank stopped where.
enum class StepPhase {
  kData = 1,
  kForward = 2,
  kBackward = 3,
  kCommWait = 4,
  kOptimizer = 5,
  kDone = 6
};
const char* step_phase_name(StepPhase phase);

struct TrainOptions {
  int64_t steps = 1;
  // --resume (checkpoint.h): the run-global index of the first step (the plan, and so the
  // sampler epoch, continue from there), and the state the model and optimizer (and an fp16 run's
  // GradScaler) start from, loaded once the optimizer exists. Null: the model's own state and a
  // fresh optimizer.
  int64_t first_step = 0;
  std::shared_ptr<const TrainingState> start_state;
  // Checked steps record what the comparison needs: each step's loss (finish_checked_step), every
  // gradient after the reduction, and the final state. Perf steps record only their times.
  bool checking = true;
  // The kernels the steps run with (CUDA): deterministic for anything compared, autotuned for the
  // timed perf phase. Separate from `checking`: lockstep's reference steps record nothing, yet
  // are compared, so they stay deterministic.
  runtime::NumericsPhase numerics = runtime::NumericsPhase::kCheck;
  GradRecordKind grad_record = GradRecordKind::kFull;
  // Gradient accumulation: every shard is cut into `micro_steps` equal micro-batches
  // (micro_batches.h), each runs forward and backward with its loss scaled by 1/micro_steps, and
  // the optimizer steps once. With `no_sync` the path's gradient sync is off for every micro-step
  // but the last (DDP's no_sync()); without it every micro-step reduces, as when a user forgets it.
  int64_t micro_steps = 1;
  bool no_sync = true;
  // The `noscale` fault (fault_injection.h): at this step the micro-step losses are not scaled.
  int64_t unscaled_step = -1;
  // The `scaler` fault (fault_injection.h): at this step this process's GradScaler scale doubles.
  int64_t diverged_scale_step = -1;
  // The `sched` fault (fault_table.h): at this step this process's optimizer steps with the next
  // step's scheduled learning rate.
  int64_t schedule_ahead_step = -1;
  // The `decay` fault: at this step this process's no-decay group steps with the scenario's
  // weight decay too.
  int64_t decay_everything_step = -1;
  // The `inf` fault's counterpart outside DDP (references, single, dp): at this step the first
  // parameter's reduced gradient gets an inf, as DDP's allreduce gives every rank.
  int64_t overflow_step = -1;
  // The `slow` fault (fault_injection.h), perf phase only: every step's forward on this process
  // takes this many more milliseconds (a busy wait inside the timed forward), as a slower rank
  // would.
  double slow_ms = 0;
  // --trace (checked steps only): records what each step computed, for `ddpbench diff`. Not
  // owned; null records nothing.
  StepTrace* trace = nullptr;
  // Before each phase of a step, untimed.
  std::function<void(int64_t step, StepPhase phase)> on_phase;
  // After each step with its loss (progress display), untimed.
  std::function<void(int64_t step, double loss)> on_step;
  // Before each step, untimed, with the model and optimizer the step will use: the lockstep
  // comparison loads the reference's state here (training/lockstep.h).
  std::function<void(int64_t step, torch::nn::Module& module, torch::optim::Optimizer& optimizer)>
      before_step;
  // After each step (after on_step), untimed, with the model, optimizer and GradScaler (null
  // without --amp fp16) it stepped: --checkpoint-every saves here.
  std::function<void(int64_t step, torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                     const scenarios::GradScaler* scaler)>
      after_step;
  // After each step and after_step, untimed, with the model and optimizer as the mode holds them
  // between steps (zero stage 3: shards): the memory footprint is measured here.
  std::function<void(int64_t step, torch::nn::Module& module, torch::optim::Optimizer& optimizer)>
      at_rest;
};

struct TrainResult {
  std::vector<double> losses;  // per checked step
  // --amp fp16, per checked step: the GradScaler's scale that step's backward used, and whether
  // the step was skipped (an inf or NaN among the unscaled gradients). Empty without a scaler.
  std::vector<double> loss_scales;
  std::vector<bool> skipped;
  std::vector<std::vector<at::Tensor>> gradients;  // per checked step, one record per parameter
  std::vector<metrics::PhaseTimes> step_times;     // per step, this process's
  NamedTensors final_state;                        // after the last step (checked runs only)
};

// What a loop trains on. The references must outlive the call.
struct TrainInputs {
  const scenarios::ScenarioSpec& spec;  // the optimizer recipe
  const data::Dataset& dataset;
  const data::GlobalBatchPlan& plan;
  const runtime::ExecutionContext& context;
  // --data-on-device: the dataset's device form (null: batches are collated on the host).
  const data::SharedDeviceData* on_device = nullptr;
};

// The loop one step at a time, for drivers that interleave two of them (the lockstep
// comparison). The optimizer is built here, after the path was constructed (which placed the
// model and, in DDP, broadcast rank 0's state), as DDP requires. Steps run in order from
// options.first_step.
class StepLoop {
 public:
  StepLoop(GradientPath& path, const TrainInputs& inputs, TrainOptions options);
  ~StepLoop();
  StepLoop(const StepLoop&) = delete;
  StepLoop& operator=(const StepLoop&) = delete;

  // Throws WorkerFailure("<who>: non-finite loss (<v>) at step <s>").
  void run_step(int64_t step);
  torch::nn::Module& module() { return path_.module(); }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  // What the steps recorded, and the final state on checked runs; call once, after the last step.
  TrainResult finish();
  // What the steps so far recorded (checked runs: each step's loss and gradients), for a driver
  // that compares two loops step by step (the rounding floor's twin).
  const TrainResult& recorded() const { return result_; }

 private:
  void enter(int64_t step, StepPhase phase);
  // Forward, backward and reduction of each accumulation micro-step of `step` (one pass without
  // accumulation); returns the step's loss, the sum of the micro-steps' scaled losses.
  at::Tensor run_micro_steps(int64_t step, const std::vector<std::vector<data::Batch>>& micro);
  // After the reduction: the overflow fault, scaler.unscale_(optimizer) and the checked step's
  // gradient record; returns whether the GradScaler skips the step (a gradient overflowed).
  bool unscale_and_record(int64_t step);
  // The schedule's rate of `step` on every group, the sched and decay faults, the path's step.
  void step_optimizer(int64_t step);
  // The step boundary: the loss read (a non-finite one throws), the checked step's loss
  // recorded, and the step's observers called.
  void end_step(int64_t step, const at::Tensor& loss, const std::vector<data::Batch>& shards);

  GradientPath& path_;
  const TrainInputs& in_;
  TrainOptions options_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<runtime::PhaseTimer> timer_;
  StepBatches batches_;
  // --amp: the dtype the forward and loss autocast to, and fp16's GradScaler (this replica's or
  // rank's own, as each DDP process has its own torch.amp.GradScaler).
  std::optional<at::ScalarType> autocast_;
  std::unique_ptr<scenarios::GradScaler> scaler_;
  TrainResult result_;
};

// Runs steps first_step .. first_step + steps - 1 of the plan through a StepLoop.
TrainResult train(GradientPath& path, const TrainInputs& inputs, const TrainOptions& options);

}  // namespace ddpbench::modes
