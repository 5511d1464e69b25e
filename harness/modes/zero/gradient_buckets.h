// gradient_buckets.h — the gradients of ZeRO stages 1 and 2 as views of flat buckets whose
// reductions start during backward (DDP's gradient_as_bucket_view): bucket_schedule.h's buckets,
// each a flat tensor the gradients of its parameters are views of, so that backward accumulates
// into the bucket and a gradient is never copied on its way to the reduction.
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
#include <utility>
#include <vector>

#include "modes/zero/bucket_schedule.h"
#include "modes/zero/zero_stage.h"

namespace ddpbench::modes::zero {

class GradientBuckets {
 public:
  struct Bucket {
    std::vector<int64_t> params;  // the parameters it holds, in backward's order
    int64_t block = 0;            // elements per block
    at::Tensor flat;              // blocks x block; undefined between steps when released
    // Per block, the elements its gradients leave over at its end: (offset, count) in flat.
    std::vector<std::pair<int64_t, int64_t>> padding;
  };
  // Starts bucket `index`'s reduction: its gradients are final in its flat tensor.
  using Launch = std::function<void(size_t index, Bucket& bucket)>;

  // `block_of`: per trained parameter, its block (its owner in the shard group, or 0 when there
  // is one block); `bucket_bytes`: bucket_schedule.h's cap.
  GradientBuckets(ZeroShared& shared, const std::vector<int64_t>& block_of, int64_t blocks,
                  int64_t bucket_bytes, bool release_between_steps, Launch launch);

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
  ZeroShared& shared_;
  bool release_;
  int64_t blocks_;
  std::vector<int64_t> block_of_;  // per parameter
  std::vector<int64_t> offset_;    // per parameter, in its bucket's flat tensor
  std::vector<at::Tensor> slots_;  // per parameter: its gradient's view of its bucket
  std::vector<Bucket> buckets_;
  BucketSchedule schedule_;  // last: its hooks go first
};

}  // namespace ddpbench::modes::zero
