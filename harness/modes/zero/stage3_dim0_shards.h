// stage3_dim0_shards.h — ZeRO stage 3 in the zero mode (FSDP2's fully_shard on each block and
// then the root, reshard_after_forward=False): every parameter is sharded on dim 0 over all ranks
// (dim0_shards.h) and only the rank's shards are held between steps. Before the forward the
// full parameters are all-gathered unit by unit (unit_gathers.h: ResNet's blocks, the root's
// parameters first; a model without units is one), each block's gather running while the blocks
// before it compute; forward and backward use them. The gradients, averaged, are reduce-scattered
// to the shards bucket by bucket during backward (bucket_schedule.h: DDP's --bucket-cap-mb
// buckets in backward's order, each bucket's chunks reduce-scattered as soon as its gradients are
// final; under HSDP each bucket's reduced chunks are all-reduced over the replicas while the next
// bucket's reduce-scatter is waited on), and a bucket's full parameters and gradients are freed
// as its reduce-scatter starts, as FSDP2 reshards each module after its backward. The
// optimizer is an ordinary one over the module's parameters, which hold their shards when it
// steps: its state is shard-shaped.
//
// Gradient clipping: each rank has only rows of each gradient, so each parameter's norm is the
// square root of the sum over ranks of its shards' squared norms (one allreduce), equal to
// clip_grad_norm_'s to rounding, not bitwise.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "modes/zero/bucket_schedule.h"
#include "modes/zero/dim0_shards.h"
#include "modes/zero/unit_gathers.h"
#include "modes/zero/zero_stage.h"

namespace ddpbench::modes::zero {

class Stage3Dim0Shards : public ZeroStage {
 public:
  // Cuts the gradients into buckets and shards the parameters. `keeps_previous_forward`: this
  // rank takes the gather fault, so it keeps each forward's full parameters to compute with the
  // next time.
  Stage3Dim0Shards(ZeroShared& shared, bool keeps_previous_forward, int64_t bucket_bytes);
  ~Stage3Dim0Shards() override;

  bool before_forward(bool stale) override;
  void after_forward() override;
  void before_backward() override;
  void reduce() override;
  // The used-parameter map's all-reduce over the world, and with replicas (HSDP) each bucket's
  // reduced chunks' over them; one reduce-scatter per bucket in the shard group.
  int64_t reduction_allreduces() const override {
    return 1 + (shared_.mesh.replicas() != nullptr ? buckets() : 0);
  }
  int64_t reduction_reduce_scatters() const override { return buckets(); }
  // Every parameter, each of which holds only this rank's shard when it steps.
  std::vector<at::Tensor> optimizer_parameters() const override { return shared_.params; }
  void clip(double max_norm) override;
  // Nothing to send: the next forward gathers the shards.
  void after_step(bool /*gather_fault*/) override {}
  // Every rank holds rows of every gradient; one all-gather (untimed).
  std::vector<at::Tensor> recorded_gradients() override;
  // The first parameter with rows in this rank's shards.
  int64_t first_owned_parameter() const override;
  bool shards_parameters() const override { return true; }
  void gather_state(torch::optim::Optimizer& optimizer) override;
  void release_state(torch::optim::Optimizer& optimizer) override;

 private:
  int64_t buckets() const;
  // Bucket `index`'s gradients are final: their chunks' reduce-scatter starts.
  void launch(size_t index);

  // Unit `unit`'s full parameters are set: its gradients at full size, the gather fault's copy.
  void gathered(int64_t unit);

  std::unique_ptr<Dim0Shards> shards_;
  std::unique_ptr<UnitGathers> gathers_;
  std::vector<char> zeroed_;  // per parameter: the step loop left it a zeroed gradient
  std::unique_ptr<BucketSchedule> schedule_;
  std::vector<Dim0Shards::PendingScatter> pending_;  // per bucket, this step
  std::vector<at::Tensor> stashed_gradients_;        // the shards' while gather_state holds
  std::vector<at::Tensor> previous_forward_;         // gather fault: the last forward's
};

}  // namespace ddpbench::modes::zero
