// zero_path.h — one rank's gradient path of the zero mode (sharded data parallel, ZeRO), with its
// own reduction and its own optimizer step; nothing of DDP's engine. Like a DDP rank it loads only
// its own slice of each step's batch, forwards its whole model (rank 0's buffers broadcast first,
// as DDP's broadcast_buffers) and backpropagates locally; what follows is its stage's
// (modes/zero/zero_stage.h), one strategy per file:
//  - stage 1 (PyTorch's ZeroRedundancyOptimizer under DDP): every gradient averaged in buckets
//    during backward; each rank steps the parameters it owns and broadcasts them
//    (stage1_allreduce.h);
//  - stage 2: each gradient reduce-scattered to its owner only (stage2_reduce_scatter.h);
//  - stage 3 (FSDP2's fully_shard per block): parameters, gradients and optimizer state sharded
//    on dim 0, the full parameters all-gathered for each forward, block by block as it reaches
//    them (stage3_dim0_shards.h).
// A parameter that no rank's backward reached keeps no gradient (used_parameters.h).
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
#include "modes/common/joined_batch.h"
#include "modes/ranks/rank_agreement.h"
#include "modes/zero/hsdp_mesh.h"
#include "modes/zero/zero_partition.h"
#include "modes/zero/zero_stage.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"

namespace ddpbench::modes::sync_bn {
struct SyncBnControl;
}

namespace ddpbench::modes::zero {

struct ZeroPathOptions {
  int64_t stage = 1;               // 1, 2 or 3
  std::optional<FaultSpec> fault;  // check phase only
  // Stage 3, checked steps: digests of the parameters each forward used, compared across ranks.
  bool checking = true;
  // BatchNorm layers converted to SyncBN over the ranks (modes/sync_bn), as DDP's are.
  bool sync_bn = false;
  // RunSetup::in_join: the run trains inside PyTorch's Join.
  bool in_join = false;
  // HSDP's shard group (hsdp_mesh.h); 0: the whole world, one replica.
  int64_t shard_group = 0;
  // The cap of a gradient bucket reduced during backward (bucket_schedule.h): DDP's
  // --bucket-cap-mb, as ZeroRedundancyOptimizer under DDP takes DDP's bucket_cap_mb.
  int64_t bucket_bytes = int64_t{25} << 20;
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
  void set_gradient_sync(bool sync) override { shared_.sync = sync; }
  void reduce_gradients() override;
  std::unique_ptr<torch::optim::Optimizer> make_optimizer(
      const scenarios::OptimizerSpec& spec) override;
  void clip_gradients(double max_norm) override;
  void step_optimizer(torch::optim::Optimizer& optimizer) override;
  std::vector<at::Tensor> gradients_to_record() override;
  double finish_checked_step(int64_t step, double local_loss, int64_t samples) override;
  std::vector<std::vector<at::Tensor>> every_rank_gradients(std::vector<at::Tensor> mine) override {
    return ranks::every_rank_tensors(shared_.comm, mine);
  }
  void gather_state(torch::optim::Optimizer& optimizer) override;
  void release_state(torch::optim::Optimizer& optimizer) override;
  // Stages 2 and 3 hold only their own gradients: the overflow flag is summed over the ranks.
  void agree_on_overflow(scenarios::GradScaler& scaler) override;

  const ZeroPartition& partition() const { return shared_.partition; }
  // Collective: `local` (this rank's optimizer, from make_optimizer) as a plain optimizer over
  // the whole model, every parameter's state gathered from its owner (consolidated_state.h).
  // Null at stage 3, whose optimizer is whole already while gather_state holds it.
  std::unique_ptr<torch::optim::Optimizer> consolidated_optimizer(
      torch::optim::Optimizer& local, const scenarios::OptimizerSpec& spec);
  // Gradient bytes this rank put on the wire in the last step.
  int64_t bytes_per_step() const { return shared_.bytes_per_step; }
  const ranks::RankDisagreement& disagreement() const { return disagreement_; }
  // What one synchronising micro-step's reduction issues (Note [Collective accounting]), and what
  // each optimizer step adds (--amp fp16's overflow agreement at stages 2 and 3).
  int64_t reduction_allreduces() const { return stage_->reduction_allreduces(); }
  int64_t reduction_reduce_scatters() const { return stage_->reduction_reduce_scatters(); }
  bool agrees_on_overflow() const { return !stage_->holds_every_gradient(); }

 private:
  // The parameter a grad/shard/owner/state fault names (a grad fault's tensor, else the first
  // the rank owns).
  int64_t fault_parameter() const;
  // This step's grad and inf faults on this rank.
  GradientFaults gradient_faults(int64_t step) const;
  // The shard, owner and state faults around this rank's optimizer step.
  void step_with_faults(torch::optim::Optimizer& optimizer);
  // The gradients of the trained parameters in the model's parameter order, a frozen
  // parameter's undefined: the order a gradient record keeps (GradientPath::gradients_to_record).
  std::vector<at::Tensor> in_model_order(std::vector<at::Tensor> trained) const;

  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule model_;
  ZeroPathOptions options_;
  std::unique_ptr<HsdpMesh> mesh_;  // before shared_, which refers to it
  ZeroShared shared_;
  std::unique_ptr<ForwardDraws> draws_;
  std::unique_ptr<ZeroStage> stage_;
  at::Tensor forward_digests_;  // stage 3: of the last checked forward's parameters
  std::vector<std::string> digest_names_;
  int64_t current_step_ = 0;
  JoinedBatch batch_;  // this step's batch, or out of batches (Note [A joined zero rank])
  // Stage 1 inside Join: the gradients of this rank's last trained step, which
  // ZeroRedundancyOptimizer's join hook steps with (Note [PyTorch's Join, as it runs]).
  std::vector<at::Tensor> last_gradients_;
  ranks::RankDisagreement disagreement_;
  std::shared_ptr<sync_bn::SyncBnControl> sync_bn_control_;  // with sync_bn: the syncbn fault
};

}  // namespace ddpbench::modes::zero
