// stage1_allreduce.h — ZeRO stage 1 in the zero mode (PyTorch's ZeroRedundancyOptimizer under
// DDP): every gradient averaged over the ranks (scaled by 1/K and summed), in buckets of up to
// 25 MiB in reverse registration order whose allreduces start during backward, as soon as a
// bucket's gradients are all there (its own hooks on the gradients' accumulation, launched in
// bucket order on every rank). Each gradient is a view of its bucket, as DDP's
// gradient_as_bucket_view, so that backward accumulates into the bucket and the allreduce leaves
// the average in place (gradient_buckets.h). The optimizer step and the broadcasts are
// owner_stage.h's.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "modes/zero/gradient_buckets.h"
#include "modes/zero/owner_stage.h"

namespace ddpbench::modes::zero {

class Stage1Allreduce : public OwnerStage {
 public:
  // Makes the buckets (one block each, kept between steps) and hooks every trained parameter's
  // gradient accumulation.
  Stage1Allreduce(ZeroShared& shared, int64_t bucket_bytes);

  void before_backward() override { buckets_.bind(); }
  void reduce() override;
  // Every rank holds every averaged gradient: clip_grad_norm_ on the whole model, as after DDP.
  void clip(double max_norm) override;
  std::vector<at::Tensor> recorded_gradients() override;
  bool holds_every_gradient() const override { return true; }
  // One per bucket, and the used-parameter map's.
  int64_t reduction_allreduces() const override {
    return static_cast<int64_t>(buckets_.size()) + 1;
  }
  int64_t reduction_reduce_scatters() const override { return 0; }

 private:
  // Scaled by 1/K before the sum, as DDP's reducer and PyTorch's allreduce hook do.
  void launch(size_t index, GradientBuckets::Bucket& bucket);

  GradientBuckets buckets_;
  std::vector<std::shared_ptr<comm::Work>> works_;  // per bucket, this step
};

}  // namespace ddpbench::modes::zero
