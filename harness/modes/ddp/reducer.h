// reducer.h — ddpbench's own DDP gradient reducer (owning it is the point: it is what gets judged;
// `--ddp-impl c10d` judges PyTorch's, c10d_engine.h). Every parameter's .grad is a view into its
// bucket's flat buffer (PyTorch's gradient_as_bucket_view), so autograd accumulates straight into
// the bucket and nothing is copied in or out: a hook after each parameter's gradient accumulation
// marks it ready; a full bucket starts its asynchronous reduction at once (buckets launch in
// order) while backward continues; finalize() waits for every bucket, whose contents are then the
// averaged gradients.
//
// Note [PyTorch's reduction arithmetic]: the engine computes Python DDP's bits (docs/DDP_ENGINES.md).
// - Each gradient is multiplied by the reciprocal 1/W as it becomes ready, as c10d's
//   mark_variable_ready_dense copies it into the bucket (at::mul_out with 1.0/W), and the
//   buckets are then summed; x * (1/3) is not x / 3 in floating point. Compression hooks get the
//   gradient unscaled and divide in their own precision, as c10d does when a hook is registered.
// - Buckets are PyTorch's (bucket_assignment.h): one bucket in the first iteration, rebuilt once
//   before the second in rank 0's gradient-ready order. At W >= 3 an allreduce sums an element in
//   an order that depends on where it sits in its bucket, so the layout is part of the arithmetic.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "modes/ddp/bucket_assignment.h"
#include "modes/ddp/comm_hook.h"

namespace torch::autograd {
struct Node;
}

namespace ddpbench::modes::ddp {

struct ReducerOptions {
  BucketLimits limits;
  CommHookKind comm_hook = CommHookKind::kAllreduce;
  // Parameters that get no gradient in a step are reduced as zeros (PyTorch's
  // find_unused_parameters). Without it such a step is an error naming the parameters.
  bool find_unused_parameters = false;
};

// Called with (parameter index, bucket slot holding this rank's gradient) just before the slot
// can be reduced; fault injection uses it to corrupt one rank's gradient.
using GradientTap = std::function<void(int64_t param_index, at::Tensor& slot)>;

class Reducer {
 public:
  // `params` in registration order; hooks are registered on each.
  Reducer(std::vector<std::string> names, std::vector<at::Tensor> params, comm::Communicator& comm,
          ReducerOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Gradients of the next backward only accumulate locally (DDP.no_sync()).
  void set_sync(bool sync) { sync_ = sync; }
  bool sync() const { return sync_; }
  void set_gradient_tap(GradientTap tap) { tap_ = std::move(tap); }
  // The bucket fault: the next synchronised reduction issues no allreduce for its last bucket,
  // which keeps this rank's own gradients.
  void skip_last_bucket(bool skip) { skip_last_bucket_ = skip; }
  // The allreduces one synchronised reduction issues in the buckets now in place: one per bucket
  // and, with find_unused_parameters, the used-parameter map's (Note [Collective accounting]).
  int64_t allreduces_per_reduction() const {
    return static_cast<int64_t>(bucket_params_.size()) + (options_.find_unused_parameters ? 1 : 0);
  }

  // Call at every forward with autograd on (DDP's _rebuild_buckets): after the first synchronised
  // step, once, re-buckets in rank 0's gradient-ready order (a broadcast every rank joins).
  void prepare_for_forward();
  // --resume: the buckets a checkpoint recorded (checkpoint.h: CheckpointMeta::ddp_buckets), as
  // the uninterrupted run had rebuilt them; no rebuild follows. At W >= 3 the layout is part of
  // the arithmetic, so a resumed run without it sums in another order. The layout must cover each
  // reduced parameter exactly once (DistributedModel checks it: check_bucket_layout).
  void adopt_buckets(const std::vector<std::vector<int64_t>>& buckets);
  // Call before each synchronised backward: points every .grad back at its bucket slot (an
  // optimizer's zero_grad(set_to_none) or a user may have replaced it), keeping its value.
  void prepare_for_backward();
  // Call after backward: waits for all reductions; .grad then holds the averaged gradients.
  void finalize();
  // A step without forward and backward, on a rank that has run out of batches while others
  // train (PyTorch's Join): every bucket joins its allreduce with zeros, in the same order, and
  // so does the unused-parameter map; .grad then holds the others' sum over the world size.
  void reduce_as_joined();

  const std::vector<std::vector<int64_t>>& buckets() const { return bucket_params_; }
  // Parameter indices in the order their hooks fired during the last backward.
  const std::vector<int64_t>& ready_order() const { return ready_order_; }
  // Bucket indices in the order they were launched during the last backward.
  const std::vector<int64_t>& launch_order() const { return launch_order_; }
  // Bucket indices launched before backward returned (i.e. overlapped with compute).
  int64_t buckets_launched_during_backward() const { return launched_in_backward_; }
  int64_t bytes_last_step() const { return bytes_last_step_; }

 private:
  // Buckets, their buffers and every parameter's slot for `buckets`.
  void allocate_buckets(std::vector<std::vector<int64_t>> buckets);
  void on_gradient_accumulated(int64_t index);
  void mark_ready(int64_t index);
  void launch_ready_buckets();

  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  comm::Communicator& comm_;
  ReducerOptions options_;
  std::vector<std::vector<int64_t>> bucket_params_;
  std::vector<at::Tensor> bucket_buffers_;
  std::vector<int64_t> bucket_of_;  // per parameter: its bucket
  std::vector<at::Tensor> slots_;   // per parameter: its view of that bucket, made once
  // Each parameter's AccumulateGrad node (held: a parameter only keeps a weak reference) and the
  // key of the post hook on it.
  std::vector<std::shared_ptr<torch::autograd::Node>> grad_accumulators_;
  std::vector<uintptr_t> hook_keys_;

  bool sync_ = true;
  bool in_backward_ = false;
  bool joined_step_ = false;  // reduce_as_joined: no gradient is missing, all are zero
  // Synchronised steps finalized (joined ones included: every rank counts the same), and whether
  // the buckets were rebuilt after the first.
  int64_t synced_steps_ = 0;
  bool rebuilt_ = false;
  std::vector<bool> param_ready_;
  std::vector<bool> param_used_;
  std::vector<bool> had_grad_;           // .grad was defined before this backward (None stays None)
  std::vector<int64_t> bucket_pending_;  // parameters still missing per bucket
  int64_t next_bucket_ = 0;
  bool skip_last_bucket_ = false;
  std::vector<std::unique_ptr<PendingReduction>> pending_;
  std::vector<int64_t> ready_order_;
  std::vector<int64_t> launch_order_;
  int64_t launched_in_backward_ = 0;
  int64_t bytes_last_step_ = 0;
  GradientTap tap_;
};

}  // namespace ddpbench::modes::ddp
