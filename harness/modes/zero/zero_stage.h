// zero_stage.h — what differs between ZeRO's stages in the zero mode, as one strategy interface
// behind modes/zero/zero_path.h: how a step's gradients are reduced, what the optimizer holds and
// steps, how the ranks get the updated parameters back, how the gradients are clipped and
// recorded. One file per stage: stage1_allreduce.h (every gradient averaged in buckets during
// backward), stage2_reduce_scatter.h (each gradient to its owner only), stage3_dim0_shards.h
// (parameters, gradients and optimizer state sharded on dim 0). ZeroPath keeps what every stage
// shares: the data, the forward, the faults of the forward and the step, the checks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "modes/zero/hsdp_mesh.h"
#include "modes/zero/used_parameters.h"
#include "modes/zero/zero_partition.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn
namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace ddpbench::modes::zero {

// The grad and inf faults of this step on this rank, which each stage applies where its
// reduction first sees a gradient.
struct GradientFaults {
  int64_t grad_parameter = -1;  // its gradient scaled by 1 + eps (the grad fault)
  double eps = 0;
  bool overflow_first = false;  // an inf in the first parameter's gradient (the inf fault)

  // On gradient `index`'s final value, once backward left it (bucket_schedule.h's Ready): in its
  // bucket slot (stages 1 and 2), or whole before its chunks are reduce-scattered (stage 3).
  void apply(int64_t index, const at::Tensor& gradient) const;
};

// A parameter's gradient, made zeros where backward left none (a parameter the step did not
// reach still takes part in the reduction, as in DDP with find_unused_parameters).
at::Tensor& gradient_or_zeros(at::Tensor& parameter);

// What ZeroPath and its stage both work on, owned by ZeroPath.
struct ZeroShared {
  torch::nn::Module& module;
  comm::Communicator& comm;  // the world: buffers, losses, used parameters, agreement
  // The shard group and the replicas (hsdp_mesh.h): what a stage partitions, reduce-scatters,
  // gathers and broadcasts is over mesh.shard(), the world when there is one replica.
  HsdpMesh& mesh;
  DivideFactors divide;
  // The parameters that train (modes/common/trained_parameters.h), in the model's order, and
  // their partition over the shard group's ranks.
  std::vector<at::Tensor> params;
  std::vector<std::string> names;
  ZeroPartition partition;
  UsedParameters used;
  GradientFaults faults;       // this step's, on this rank
  HsdpFaults hsdp_faults;      // this step's, on every rank
  bool sync = true;            // false in a no_sync micro-step
  int64_t bytes_per_step = 0;  // gradient bytes this rank put on the wire in the last step
};

class ZeroStage {
 public:
  explicit ZeroStage(ZeroShared& shared) : shared_(shared) {}
  virtual ~ZeroStage() = default;
  ZeroStage(const ZeroStage&) = delete;
  ZeroStage& operator=(const ZeroStage&) = delete;

  // Before a forward; true when it gathers the full parameters (stage 3), with the other ranks'
  // rows stale under `stale` (the gather fault), by the end of after_forward.
  virtual bool before_forward(bool /*stale*/) { return false; }
  // After that forward (or in its place, on a joined rank): stage 3's gathers all finished.
  virtual void after_forward() {}
  // Before a synchronised backward.
  virtual void before_backward() {}
  // Collective, after a synchronised backward: the gradients averaged over the ranks, where this
  // stage keeps them; a parameter no rank used keeps none.
  virtual void reduce() = 0;
  // What this rank's optimizer steps.
  virtual std::vector<at::Tensor> optimizer_parameters() const = 0;
  // Collective: the gradients scaled by clip_grad_norm_'s coefficient for the whole model.
  virtual void clip(double max_norm) = 0;
  // Collective, after this rank's optimizer step: every rank holds what the next forward needs.
  // `gather_fault`: this rank misses the others' parameters and keeps their old values.
  virtual void after_step(bool gather_fault) = 0;
  // Collective (checked steps, untimed): every trained parameter's averaged gradient, whole, in
  // the parameters' order; undefined where no rank used it.
  virtual std::vector<at::Tensor> recorded_gradients() = 0;
  // The parameter the shard, owner and state faults corrupt: the first with values this rank
  // steps; -1 when it steps none.
  virtual int64_t first_owned_parameter() const = 0;
  // What reduce() issues, by kind (Note [Collective accounting]).
  virtual int64_t reduction_allreduces() const = 0;
  virtual int64_t reduction_reduce_scatters() const = 0;
  // Every rank holds every averaged gradient (so every rank sees an overflow on its own).
  virtual bool holds_every_gradient() const { return false; }
  // The parameters are sharded between steps (stage 3): the optimizer is whole, and the ranks
  // compare what each forward gathered rather than the parameters they hold.
  virtual bool shards_parameters() const { return false; }
  // Collective, stage 3: the optimizer's state and the parameters whole for an observer, and back.
  virtual void gather_state(torch::optim::Optimizer& /*optimizer*/) {}
  virtual void release_state(torch::optim::Optimizer& /*optimizer*/) {}

 protected:
  ZeroShared& shared_;
};

}  // namespace ddpbench::modes::zero
