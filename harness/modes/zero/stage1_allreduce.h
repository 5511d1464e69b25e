// stage1_allreduce.h — ZeRO stage 1 in the zero mode (PyTorch's ZeroRedundancyOptimizer under
// DDP): every gradient averaged over the ranks (scaled by 1/K and summed), in buckets of up to
// 25 MiB in reverse registration order whose allreduces start during backward, as soon as a
// bucket's gradients are all there (its own hooks on the gradients' accumulation, launched in
// bucket order on every rank). Each gradient is a view of its bucket, as DDP's
// gradient_as_bucket_view, so that backward accumulates into the bucket and the allreduce leaves
// the average in place. The optimizer step and the broadcasts are owner_stage.h's.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "modes/zero/owner_stage.h"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace ddpbench::modes::zero {

class Stage1Allreduce : public OwnerStage {
 public:
  // Makes the buckets and hooks every trained parameter's gradient accumulation.
  explicit Stage1Allreduce(ZeroShared& shared);
  ~Stage1Allreduce() override;

  void before_backward() override { bind_gradient_slots(); }
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
  // Parameters in reverse registration order, their gradients flat.
  struct Bucket {
    std::vector<int64_t> params;
    at::Tensor flat;
    int64_t pending = 0;  // gradients still to arrive this step
    std::shared_ptr<comm::Work> work;
  };
  void make_buckets();
  void hook_gradient_accumulation();
  // Before a synchronised backward: every gradient is its bucket slot again, keeping the value it
  // has (no_sync's accumulation, or one replaced since), zeros where it is None.
  void bind_gradient_slots();
  // Parameter `index`'s gradient is final in its slot this step (accumulated in backward, or
  // not reached): the grad fault acts; a full bucket starts its allreduce.
  void slot_ready(int64_t index);
  // Starts the allreduces of the next full buckets, in bucket order.
  void launch_ready_buckets();

  std::vector<Bucket> buckets_;
  std::vector<int64_t> bucket_of_;  // per parameter
  std::vector<at::Tensor> slots_;   // per parameter: its gradient's view of its bucket
  std::vector<char> arrived_;       // per parameter, this step
  bool in_backward_ = false;
  std::vector<std::shared_ptr<torch::autograd::Node>> grad_accumulators_;
  std::vector<uintptr_t> hook_keys_;
  size_t next_launch_ = 0;
};

}  // namespace ddpbench::modes::zero
