// gradient_buckets.h — the gradients of ZeRO stages 1 and 2 as views of flat buckets whose
// reductions start during backward, as DDP's reducer does (gradient_as_bucket_view, 25 MiB
// buckets): the trained parameters in reverse registration order (backward's order, roughly) cut
// into buckets of up to --bucket-cap-mb (25 MiB), a hook on each parameter's gradient accumulation,
// and each bucket handed to its stage as soon as all its gradients are final, in bucket order on
// every rank whatever order they arrive in, so that every rank's collectives pair up. Backward
// accumulates into the bucket, so a gradient is never copied on its way to the reduction.
//
// A bucket's flat tensor is `blocks` equal blocks: one (stage 1 allreduces the bucket whole) or
// one per shard rank (stage 2 reduce-scatters it): block r holds the bucket's gradients of the
// parameters rank r owns, padded with zeros to the bucket's largest block. Stage 1 keeps its
// buckets between steps (every rank holds every gradient anyway); stage 2 releases them after
// each reduction, so that a rank holds its own gradients only between steps, as ZeRO-2.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "modes/zero/zero_stage.h"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace ddpbench::modes::zero {

class GradientBuckets {
 public:
  struct Bucket {
    std::vector<int64_t> params;  // the parameters it holds, in backward's order
    int64_t block = 0;            // elements per block
    at::Tensor flat;              // blocks x block; undefined between steps when released
    int64_t pending = 0;          // gradients still to arrive this step
  };
  // Starts bucket `index`'s reduction: its gradients are final in its flat tensor.
  using Launch = std::function<void(size_t index, Bucket& bucket)>;

  // `block_of`: per trained parameter, its block (its owner in the shard group, or 0 when there
  // is one block). Hooks every trained parameter's gradient accumulation; throws
  // std::invalid_argument naming a parameter that does not require grad.
  // `bucket_bytes`: a bucket's cap (a parameter larger than it has a bucket of its own).
  GradientBuckets(ZeroShared& shared, const std::vector<int64_t>& block_of, int64_t blocks,
                  int64_t bucket_bytes, bool release_between_steps, Launch launch);
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // Before a synchronised backward: every gradient is its bucket slot, keeping the value it has
  // (no_sync's accumulation, or one replaced since), zeros where it is None.
  void bind();
  // After backward, before the reduction is waited on: the parameters backward did not reach are
  // final as they are, and every bucket not yet launched is.
  void finish_backward();
  // After the stage's reduction: ready for the next step (released buckets are freed; the
  // gradients the stage kept must no longer be views of them).
  void reset();

  std::vector<Bucket>& buckets() { return buckets_; }
  size_t size() const { return buckets_.size(); }
  // Parameter `index`'s place in its bucket's flat tensor, counted from its block's start.
  int64_t offset_in_block(int64_t index) const;

 private:
  void make_buckets(const std::vector<int64_t>& block_of, int64_t blocks, int64_t bucket_bytes);
  void hook_gradient_accumulation();
  // Parameter `index`'s gradient is final in its slot this step: the grad and inf faults act.
  void slot_ready(int64_t index);
  void launch_ready_buckets();

  ZeroShared& shared_;
  bool release_;
  Launch launch_;
  std::vector<Bucket> buckets_;
  std::vector<int64_t> bucket_of_;  // per parameter
  std::vector<int64_t> offset_;     // per parameter, in its bucket's flat tensor
  std::vector<int64_t> block_of_;   // per parameter
  int64_t blocks_ = 1;
  std::vector<at::Tensor> slots_;  // per parameter: its gradient's view of its bucket
  std::vector<char> arrived_;      // per parameter, this step
  bool in_backward_ = false;
  size_t next_launch_ = 0;
  std::vector<std::shared_ptr<torch::autograd::Node>> grad_accumulators_;
  std::vector<uintptr_t> hook_keys_;
};

}  // namespace ddpbench::modes::zero
