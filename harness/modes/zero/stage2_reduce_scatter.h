// stage2_reduce_scatter.h — ZeRO stage 2 in the zero mode: each gradient is averaged over the
// ranks (scaled by 1/K and summed) and reduce-scattered to its owner only, bucket by bucket during
// backward as DDP overlaps its allreduces (gradient_buckets.h: 25 MiB buckets in backward's order,
// each gradient a view of its owner's block of its bucket, a bucket's reduce-scatter started as
// soon as its gradients are final). A rank keeps the averaged gradients of its own parameters and
// frees the others' with the buckets, as ZeRO-2 frees them. Under HSDP each block's replica
// all-reduce starts once its reduce-scatter is done, while the next bucket's is waited on. The
// optimizer step and the broadcasts are owner_stage.h's.
//
// Gradient clipping uses the whole model's norm: each rank contributes its own parameters' norms
// to one allreduce (each norm from one rank, zeros elsewhere, so the sum is exact), and the norm of
// those norms is what clip_grad_norm_ computes on the whole model (bit for bit).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "modes/zero/gradient_buckets.h"
#include "modes/zero/owner_stage.h"

namespace ddpbench::modes::zero {

class Stage2ReduceScatter : public OwnerStage {
 public:
  // Makes the buckets (a block per shard rank, released between steps) and hooks every trained
  // parameter's gradient accumulation.
  Stage2ReduceScatter(ZeroShared& shared, int64_t bucket_bytes);

  void before_backward() override { buckets_.bind(); }
  void reduce() override;
  // The used-parameter map's all-reduce over the world, and with replicas (HSDP) each reduced
  // block's over them; one reduce-scatter per bucket in the shard group.
  int64_t reduction_allreduces() const override {
    return 1 + (shared_.mesh.replicas() != nullptr ? static_cast<int64_t>(buckets_.size()) : 0);
  }
  int64_t reduction_reduce_scatters() const override {
    return static_cast<int64_t>(buckets_.size());
  }
  void clip(double max_norm) override;
  // Each gradient lives on its owner only: gathered for the record, one broadcast per owner.
  std::vector<at::Tensor> recorded_gradients() override;

 private:
  // The divide factor before the sum (hsdp_mesh.h), then the bucket's reduce-scatter.
  void launch(size_t index, GradientBuckets::Bucket& bucket);

  GradientBuckets buckets_;
  std::vector<comm::ScatterWork> scatters_;  // per bucket, this step
};

}  // namespace ddpbench::modes::zero
