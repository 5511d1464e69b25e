// ddp_path.h — one DDP rank's gradient path: it loads only its own slice of each step's global
// batch (Note [Same samples in every mode] in docs/ARCHITECTURE.md), trains through
// DistributedModel (broadcast, bucketed or naive averaging), optionally converts BatchNorm to
// SyncBN, applies injected faults, and after every checked step computes the global loss and checks
// that all ranks hold bit-identical parameters, and (with broadcast_buffers) that every rank's
// forward started from rank 0's buffers.
//
// Uneven rank batches (data/batch_plan.h): on an epoch's last steps a rank may have no batch left
// while others still train. It then does what PyTorch's Join context makes a joined DDP rank do:
// no forward or backward; it joins every gradient bucket's allreduce (and the unused-parameter
// map's) with zeros, so the others' allreduces complete and the average stays over the initial
// world size (divide_by_initial_world_size). Unlike PyTorch, whose joined rank drops what those
// allreduces return and gets the final model broadcast from the last joiner when the Join block
// ends, the joined rank here steps its optimizer with the averaged gradient they return: its
// parameters are at every step what PyTorch's are after that final broadcast, its momentum stays
// the others' (PyTorch's goes stale), and the per-step rank agreement check stays meaningful. The
// ranks know from the plan when each joins, so no allreduce is needed to find that out.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "metrics/step_statistics.h"
#include "modes/common/fault_injection.h"
#include "modes/common/forward_draws.h"
#include "modes/common/gradient_path.h"
#include "modes/common/joined_batch.h"
#include "modes/ddp/distributed_model.h"
#include "modes/ranks/rank_agreement.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"

namespace ddpbench::modes::sync_bn {
struct SyncBnControl;
}

namespace ddpbench::modes::ddp {

struct DdpPathOptions {
  DdpOptions ddp;
  // Deliberate fault (check phase only); nullopt = none.
  std::optional<FaultSpec> fault;
  // Convert BatchNorm layers to SyncBN over the DDP communicator.
  bool sync_bn = false;
  // Checked steps: keep what the rank agreement checks need (copies of the buffers every forward
  // starts from). Off for the perf phase, so its timed steps do no checking work.
  bool checking = true;
  // RunSetup::in_join: the run trains inside PyTorch's Join.
  bool in_join = false;
};

using ranks::RankDisagreement;

// --amp fp16: the first checked step after which some rank's GradScaler scale differed from
// rank 0's, and the two scales.
struct ScaleDisagreement {
  int64_t step = -1;  // -1: the ranks always agreed (or no scaler)
  int64_t rank = -1;
  double scale = 0;
  double rank0_scale = 0;
};

class DdpPath : public GradientPath {
 public:
  // Places the instance's model, converts SyncBN if asked, wraps it in DistributedModel (which
  // broadcasts rank 0's state). Throws InputError for a fault naming an unknown tensor.
  DdpPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
          comm::Communicator& comm, const runtime::ExecutionContext& context,
          DdpPathOptions options);
  ~DdpPath() override;

  torch::nn::Module& module() override { return model_->module(); }
  std::string who() const override;
  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override;
  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) override;
  void backward(const at::Tensor& loss) override;
  void set_gradient_sync(bool sync) override { model_->set_sync(sync); }
  void reduce_gradients() override;
  bool steps_this_step() const override { return !batch_.joined(); }
  void end_step(bool last_step) override;
  double finish_checked_step(int64_t step, double local_loss, int64_t samples) override;
  void check_loss_scale(int64_t step, double scale) override;
  std::vector<std::vector<at::Tensor>> every_rank_gradients(std::vector<at::Tensor> mine) override {
    return ranks::every_rank_tensors(comm_, mine);
  }
  // This rank's replica in eval mode; the first call after training joins the buffer broadcast
  // (DistributedModel::evaluation_forward), so every rank must call it at least once.
  at::Tensor eval_forward(const at::Tensor& inputs) override;

  // Gradient bytes this rank put on the wire in the last step.
  int64_t bytes_per_step() const { return model_->bytes_last_step(); }
  // Collectives this rank issued during backward and gradient reduction in the last step, over
  // all its accumulation micro-steps: the communicator's own count, so an allreduce that
  // no_sync should have skipped shows here.
  int64_t gradient_collectives_per_step() const { return gradient_collectives_; }
  // Per step, the allreduces its reductions had to issue (DistributedModel::
  // allreduces_per_reduction): what the `collectives` check holds the issued count to.
  const std::map<int64_t, int64_t>& required_allreduces() const { return required_allreduces_; }
  // Buckets of the bucketed reducer (0 for the naive strategy).
  int64_t num_buckets() const;
  // DistributedModel::settle_buckets and bucket_layout: every rank settles, rank 0 records the
  // layout in its checkpoints.
  void settle_buckets() { model_->settle_buckets(); }
  std::vector<std::vector<int64_t>> bucket_layout() const { return model_->bucket_layout(); }
  const RankDisagreement& disagreement() const { return disagreement_; }
  // Whether every rank's forward must start from rank 0's buffers (broadcast_buffers and the
  // model has buffers), and the first checked step where one did not.
  bool checks_buffers() const;
  const RankDisagreement& buffer_disagreement() const { return buffer_disagreement_; }
  const ScaleDisagreement& scale_disagreement() const { return scale_disagreement_; }

 private:
  // Parameters and buffers from the last rank to join (join_.last_joiner), collective.
  void sync_as_join_ends();

  const scenarios::ScenarioSpec& spec_;
  comm::Communicator& comm_;
  DdpPathOptions options_;
  std::shared_ptr<sync_bn::SyncBnControl> sync_bn_control_;
  std::unique_ptr<DistributedModel> model_;
  std::unique_ptr<ForwardDraws> draws_;  // rank r's forward of step s draws as chunk r's
  int64_t current_step_ = 0;
  int64_t counted_step_ = -1;  // the step gradient_collectives_ counts
  int64_t gradient_collectives_ = 0;
  // c10d's engine: collectives its Reducer issued in this reduction's backward, past the
  // recording communicator (counted into it at the reduction's end).
  int64_t issued_past_ = 0;
  std::map<int64_t, int64_t> required_allreduces_;
  bool evaluated_ = false;  // an evaluation forward ran (the buffers were synced for it)
  JoinedBatch batch_;       // this step's batch, or out of batches, shadowing the others (Join)
  // Which ranks have joined at this step and whether Join's final sync ends it: found from the
  // epoch's plan where step_shards reads it (const, as the step loop calls it).
  mutable JoinStep join_;
  bool synced_ = false;  // Join's final sync ended the last step
  RankDisagreement disagreement_;
  RankDisagreement buffer_disagreement_;
  ScaleDisagreement scale_disagreement_;
};

}  // namespace ddpbench::modes::ddp
