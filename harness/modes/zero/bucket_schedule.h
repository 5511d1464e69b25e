// bucket_schedule.h — when each of a zero stage's gradient buckets can be reduced during backward,
// as DDP's reducer decides it: the trained parameters in reverse registration order (backward's
// order, roughly) cut into buckets of up to --bucket-cap-mb (25 MiB), a hook on each parameter's
// gradient accumulation, and each bucket launched as soon as all its gradients are final, in
// bucket order on every rank whatever order they arrive in, so that every rank's collectives pair
// up. What a bucket holds and which collective reduces it are the stage's: gradient_buckets.h
// (stages 1 and 2, gradients as views of flat buckets) and stage3_dim0_shards.h (dim-0 chunks).
#pragma once

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

class BucketSchedule {
 public:
  // Parameter `index`'s gradient is final for this step (backward accumulated it, or reduce()
  // found it unreached): the faults of the step act on it here.
  using Ready = std::function<void(int64_t index)>;
  // Bucket `index`'s gradients are all final: its reduction starts.
  using Launch = std::function<void(size_t index)>;

  // Throws std::invalid_argument naming a parameter that does not require grad. A parameter
  // larger than `bucket_bytes` has a bucket of its own.
  BucketSchedule(ZeroShared& shared, int64_t bucket_bytes, Ready ready, Launch launch);
  ~BucketSchedule();
  BucketSchedule(const BucketSchedule&) = delete;
  BucketSchedule& operator=(const BucketSchedule&) = delete;

  // Before a synchronised backward, after its forward: hooks the gradient accumulation of every
  // trained parameter, which counts arrivals from now on. The hooks go again at reset(), and the
  // accumulation nodes with the graph: stage 3's parameters change shape between steps, and a node
  // kept past its graph would expect the old shape.
  void arm();
  bool armed() const { return armed_; }
  // After backward: the parameters backward did not reach are ready as they are, and every bucket
  // not yet launched is.
  void finish_backward();
  // After the stage's reduction: no parameter has arrived, no bucket is launched, nothing is
  // hooked.
  void reset();

  // Per bucket, its parameters in backward's order.
  const std::vector<std::vector<int64_t>>& buckets() const { return buckets_; }
  size_t size() const { return buckets_.size(); }
  int64_t bucket_of(int64_t index) const { return bucket_of_[static_cast<size_t>(index)]; }

 private:
  void hook_gradient_accumulation();
  void unhook();
  void arrive(int64_t index);
  void launch_ready_buckets();

  ZeroShared& shared_;
  Ready ready_;
  Launch launch_;
  std::vector<std::vector<int64_t>> buckets_;
  std::vector<int64_t> bucket_of_;  // per parameter
  std::vector<int64_t> pending_;    // per bucket: gradients still to arrive this step
  std::vector<char> arrived_;       // per parameter, this step
  bool armed_ = false;
  size_t next_launch_ = 0;
  std::vector<std::shared_ptr<torch::autograd::Node>> grad_accumulators_;
  std::vector<uintptr_t> hook_keys_;
};

}  // namespace ddpbench::modes::zero
