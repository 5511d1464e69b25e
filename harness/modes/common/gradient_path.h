// gradient_path.h — what makes a mode a mode: how it turns a step's batch into the gradients the
// optimizer applies. Everything else of a training step — walking the plan, loading and placing
// the batch, the optimizer, phase timing, the non-finite check, progress — belongs to the step
// loop (step_loop.h) and is the same for every mode. Modes share that scaffolding and never a
// gradient path (Note [Independent gradient paths] in docs/ARCHITECTURE.md): each implementation of
// this interface is its own code, and agreement between two of them means something.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/batch_plan.h"
#include "data/dataset.h"
#include "runtime/execution_context.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}
namespace ddpbench::scenarios {
struct OptimizerSpec;
class GradScaler;
}  // namespace ddpbench::scenarios

namespace ddpbench::modes {

class GradientPath {
 public:
  virtual ~GradientPath() = default;

  // The module whose parameters the optimizer steps and whose gradients and state are
  // observed: the model (single), the master (dp), this rank's replica (ddp).
  virtual torch::nn::Module& module() = 0;
  // Who trains, for failure messages: "single", "dp", "rank 1".
  virtual std::string who() const = 0;

  // The samples this process loads for a step of `epoch`, as shards the step loop loads at once,
  // one thread each: the whole global batch as one shard (single), one shard per replica (dp:
  // shard r is rank r's slice of the plan, as DataParallel's scatter gives replica r), or only
  // this rank's slice (ddp).
  virtual std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                        int64_t step_in_epoch) const = 0;

  // Where shard `shard` is placed: the process's device; dp puts shard r on replica r's device.
  virtual at::Device shard_device(int64_t /*shard*/,
                                  const runtime::ExecutionContext& context) const {
    return context.device();
  }

  // The forward pass of run-global step `step` on the placed shards (in step_shards' order);
  // returns the loss this mode backpropagates.
  virtual at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) = 0;
  virtual void backward(const at::Tensor& loss) = 0;
  // Whether the next forward and backward reduce gradients across ranks (true) or only
  // accumulate them locally (false): DDP's no_sync(), which the step loop turns on for every
  // accumulation micro-step but the last. Modes with nothing to synchronise ignore it (a dp
  // user has no no_sync: DataParallel's reduce-add is part of every backward).
  virtual void set_gradient_sync(bool /*sync*/) {}
  // After backward, before the optimizer: leaves in module()'s .grad the gradients this mode
  // trains with (dp: the sum of the replicas'; ddp: the average over ranks). Called after every
  // micro-step's backward; it adds to what earlier micro-steps of the step left in .grad.
  virtual void reduce_gradients() = 0;

  // The optimizer the step loop steps, built once, after the path (which in DDP broadcast rank
  // 0's state): the scenario's over module()'s parameters; zero: over this rank's own only.
  virtual std::unique_ptr<torch::optim::Optimizer> make_optimizer(
      const scenarios::OptimizerSpec& spec);
  // The scenario's gradient clipping (clip_grad_norm_) of the gradients this mode trains with,
  // before the optimizer step; zero stage 2 clips the shards it owns by the whole model's norm.
  virtual void clip_gradients(double max_norm);
  // The optimizer step: optimizer.step(); zero: then each rank's parameters from their owner.
  virtual void step_optimizer(torch::optim::Optimizer& optimizer);
  // Whether this process clips, steps and updates its GradScaler this step: not a DDP rank that
  // has joined, which has left its training loop (Note [PyTorch's Join, as it runs]).
  virtual bool steps_this_step() const { return true; }
  // After the step's optimizer step (or a GradScaler's skipped one) and the scaler's update;
  // `last_step`: the loop's last. ddp runs Join's final model sync at an epoch's or the run's end.
  virtual void end_step(bool /*last_step*/) {}
  // What a checked step records as the mode's gradients, one per parameter of module(), after
  // the reduction (undefined where a parameter has none): module()'s .grad; zero stage 2 gathers
  // each from its owner (collective, untimed).
  virtual std::vector<at::Tensor> gradients_to_record();

  // --trace, after a checked step, outside the timed region: every rank's (dp: replica's) local
  // gradients of the step in rank order, given this process's (StepTrace::local_gradients: host
  // tensors of the same shapes on every rank, undefined for a parameter that does not train). The
  // per-rank modes gather them (collective: every rank calls it); one process has only its own.
  virtual std::vector<std::vector<at::Tensor>> every_rank_gradients(std::vector<at::Tensor> mine) {
    return {std::move(mine)};
  }

  // After a checked step, outside the timed region: the loss to record for the step, given this
  // process's mean loss over `samples` samples. DDP returns the global mean over ranks and checks
  // that every rank holds the same parameters; the others return `local_loss`.
  virtual double finish_checked_step(int64_t /*step*/, double local_loss, int64_t /*samples*/) {
    return local_loss;
  }

  // Around everything that reads or writes the model and optimizer from outside a step (lockstep
  // loading the reference's state, the checked-step digests, checkpoints, the final state,
  // --resume), collective: gather_state makes module()'s parameters and the optimizer's state
  // whole, release_state takes them back to what the mode holds between steps, from their
  // current values. Only zero stage 3 holds less than the whole (shards); the others do nothing.
  virtual void gather_state(torch::optim::Optimizer& /*optimizer*/) {}
  virtual void release_state(torch::optim::Optimizer& /*optimizer*/) {}

  // --amp fp16, after a checked step's finish_checked_step: the GradScaler's scale after the
  // step's update. DDP checks that every rank holds the same; one process has nothing to check.
  virtual void check_loss_scale(int64_t /*step*/, double /*scale*/) {}

  // --amp fp16, after the GradScaler unscaled this process's gradients: a mode whose processes
  // hold different gradients (zero's shards) makes the overflow flag every rank's, so that every
  // rank skips the same steps (FSDP's ShardedGradScaler allreduces found_inf). Where every
  // process holds every averaged gradient there is nothing to agree on.
  virtual void agree_on_overflow(scenarios::GradScaler& /*scaler*/) {}

  // The evaluation pass's forward (training/evaluation.h), after training: `inputs` on the
  // context's device, the model in eval mode (BatchNorm uses its running statistics) under no
  // autograd; returns the outputs in sample order on that device and leaves the model in train
  // mode. single: the model; dp: the batch scattered over the replicas and gathered, as
  // DataParallel's forward; ddp: this rank's replica on its share.
  virtual at::Tensor eval_forward(const at::Tensor& inputs);
};

}  // namespace ddpbench::modes
