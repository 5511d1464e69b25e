// zero_path.h — one rank's gradient path of the zero mode (sharded data parallel, ZeRO), with its
// own reduction and its own optimizer step; nothing of DDP's engine. Like a DDP rank it loads only
// its own slice of each step's batch, forwards its whole model (rank 0's buffers broadcast first,
// as DDP's broadcast_buffers) and backpropagates locally; then:
//  - stage 1 (PyTorch's ZeroRedundancyOptimizer under DDP): every gradient averaged over the
//    ranks (scaled by 1/K and summed), in buckets of up to 25 MiB in reverse registration order
//    whose allreduces start during backward, as soon as a bucket's gradients are all there (its
//    own hooks on the gradients' accumulation, launched in bucket order on every rank); each
//    gradient is a view of its bucket, as DDP's gradient_as_bucket_view, so that backward
//    accumulates into the bucket and the allreduce leaves the average in place; each rank's
//    optimizer holds only the parameters it owns (zero_partition.h) and steps them; every
//    parameter is then broadcast from its owner (one broadcast per owner, of the owner's
//    parameters as they lie in one flat buffer: sharded_optimizer.h's pack_by_owner, stages 1 and
//    2);
//  - stage 2: the same, but each gradient is reduce-scattered to its owner only: a rank keeps the
//    averaged gradients of its own parameters and frees the others'.
//  - stage 3 (FSDP2's fully_shard on the whole model, reshard_after_forward=False): every
//    parameter is sharded on dim 0 over all ranks (dim0_shards.h) and only the rank's shards are
//    held between steps; one all-gather before the forward gives the full parameters, which
//    forward and backward use and which are freed once the gradients, averaged, are
//    reduce-scattered to the shards. The optimizer is an ordinary one over the module's
//    parameters, which hold their shards when it steps: its state is shard-shaped. One unit (the
//    whole model), so the full parameters are held from the forward to the end of backward;
//    FSDP2 with every layer wrapped would hold one layer's at a time there.
// A parameter that no rank's backward reached keeps no gradient (.grad None), as under DDP with
// find_unused_parameters, so that the optimizer skips it as single-device training does; one that
// only some ranks reached is reduced with zeros from the others. Which is which takes one small
// allreduce of the ranks' used maps per step.
// Gradient clipping uses the whole model's norm: each rank contributes its own parameters' norms
// to one allreduce (each norm from one rank, zeros elsewhere, so the sum is exact), and the norm of
// those norms is what clip_grad_norm_ computes on the whole model (bit for bit). Stage 3 has only
// rows of each gradient: each parameter's norm is the square root of the sum over ranks of its
// shards' squared norms (one allreduce), equal to clip_grad_norm_'s to rounding, not bitwise.
//
// Faults (check phase): grad, crash, hang, nan, inf (--amp fp16) as in DDP; shard: after rank R's
// local step at step S, one parameter it owns is corrupted by eps before the broadcast spreads it;
// owner: at step S rank R leaves one of its parameters un-stepped, as if its partition gave it to
// another rank (which does not step it either); gather: at step S rank R misses the broadcasts of
// the others' parameters and keeps their old values (stage 3: its forward's all-gather of the
// others' shards, so it computes with the previous step's rows of theirs; the ranks' forward
// parameters are compared after every checked step); state: after rank R's step at step S, its
// optimizer state of the parameter the shard fault would pick is scaled by 1+eps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "modes/common/fault_injection.h"
#include "modes/common/forward_draws.h"
#include "modes/common/gradient_path.h"
#include "modes/ranks/rank_agreement.h"
#include "modes/zero/dim0_shards.h"
#include "modes/zero/zero_partition.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace ddpbench::modes::zero {

struct ZeroPathOptions {
  int64_t stage = 1;               // 1, 2 or 3
  std::optional<FaultSpec> fault;  // check phase only
  // Stage 3, checked steps: digests of the parameters each forward used, compared across ranks.
  bool checking = true;
};

class ZeroPath : public GradientPath {
 public:
  // Places the instance's model and broadcasts rank 0's parameters and buffers to every rank.
  ZeroPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
           comm::Communicator& comm, const runtime::ExecutionContext& context,
           ZeroPathOptions options);
  ~ZeroPath() override;

  torch::nn::Module& module() override { return *model_.ptr(); }
  std::string who() const override;
  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override;
  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) override;
  void backward(const at::Tensor& loss) override;
  void set_gradient_sync(bool sync) override { sync_ = sync; }
  void reduce_gradients() override;
  std::unique_ptr<torch::optim::Optimizer> make_optimizer(
      const scenarios::OptimizerSpec& spec) override;
  void clip_gradients(double max_norm) override;
  void step_optimizer(torch::optim::Optimizer& optimizer) override;
  std::vector<at::Tensor> gradients_to_record() override;
  double finish_checked_step(int64_t step, double local_loss, int64_t samples) override;
  void gather_state(torch::optim::Optimizer& optimizer) override;
  void release_state(torch::optim::Optimizer& optimizer) override;
  // Stages 2 and 3 hold only their own gradients: the overflow flag is summed over the ranks.
  void agree_on_overflow(scenarios::GradScaler& scaler) override;

  const ZeroPartition& partition() const { return partition_; }
  // Collective: `local` (this rank's optimizer, from make_optimizer) as a plain optimizer over
  // the whole model, every parameter's state gathered from its owner (consolidated_state.h).
  // Null at stage 3, whose optimizer is whole already while gather_state holds it.
  std::unique_ptr<torch::optim::Optimizer> consolidated_optimizer(
      torch::optim::Optimizer& local, const scenarios::OptimizerSpec& spec);
  // Gradient bytes this rank put on the wire in the last step.
  int64_t bytes_per_step() const { return bytes_per_step_; }
  const ranks::RankDisagreement& disagreement() const { return disagreement_; }

 private:
  // Stage 1's buckets: parameters in reverse registration order, each bucket's gradients flat.
  struct Bucket {
    std::vector<int64_t> params;
    at::Tensor flat;
    int64_t pending = 0;  // gradients still to arrive this step
    std::shared_ptr<comm::Work> work;
  };
  void make_buckets();
  // Before a synchronised backward: every gradient is its bucket slot again, keeping the value it
  // has (no_sync's accumulation, or one replaced since), zeros where it is None.
  void bind_gradient_slots();
  // Parameter `index`'s gradient is final in its slot this step (accumulated in backward, or
  // not reached): the grad fault acts; a full bucket starts its allreduce.
  void slot_ready(int64_t index);
  // Starts the allreduces of the next full buckets, in bucket order.
  void launch_ready_buckets();
  void allreduce_gradients();
  void reduce_scatter_gradients();
  // Stage 3: the full gradients averaged into this rank's shards, the full parameters freed.
  void reduce_scatter_shards();
  void clip_shards(double max_norm);
  // Stage 3, before a forward: the full parameters (the gather fault acts here).
  void gather_for_forward(int64_t step);
  // Collective: after each rank set used_, whether any rank used each parameter (used_anywhere_).
  std::shared_ptr<comm::Work> start_used_map(at::Tensor& map);
  void finish_used_map(const at::Tensor& map);
  // The parameter a grad/shard/owner fault names (its tensor, else the first the rank owns).
  int64_t fault_parameter() const;
  // The gradients of params_ in the model's parameter order, a frozen parameter's undefined: the
  // order a gradient record keeps (GradientPath::gradients_to_record).
  std::vector<at::Tensor> in_model_order(std::vector<at::Tensor> trained) const;

  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule model_;
  comm::Communicator& comm_;
  ZeroPathOptions options_;
  // The parameters that train (modes/common/trained_parameters.h), partitioned over the ranks.
  std::vector<at::Tensor> params_;
  std::vector<std::string> names_;
  ZeroPartition partition_;
  std::unique_ptr<Dim0Shards> shards_;         // stage 3
  std::vector<at::Tensor> stashed_gradients_;  // stage 3: the shards' while gather_state holds
  std::vector<at::Tensor> previous_forward_;   // stage 3, gather fault: the last forward's
  at::Tensor forward_digests_;                 // stage 3: of the last checked forward's
  std::vector<std::string> digest_names_;
  std::unique_ptr<ForwardDraws> draws_;
  std::vector<Bucket> buckets_;
  std::vector<int64_t> bucket_of_;  // per parameter
  std::vector<at::Tensor> slots_;   // per parameter: its gradient's view of its bucket
  std::vector<char> arrived_;       // per parameter, this step
  bool in_backward_ = false;
  std::vector<std::shared_ptr<torch::autograd::Node>> grad_accumulators_;
  std::vector<uintptr_t> hook_keys_;
  std::vector<at::Tensor> packed_;   // stages 1 and 2: each owner's parameters, flat
  std::vector<char> used_;           // per parameter: this rank has a gradient for it this step
  std::vector<char> used_anywhere_;  // per parameter: some rank has (so it is reduced, not None)
  size_t next_launch_ = 0;
  int64_t current_step_ = 0;
  bool sync_ = true;
  int64_t bytes_per_step_ = 0;
  ranks::RankDisagreement disagreement_;
};

}  // namespace ddpbench::modes::zero
