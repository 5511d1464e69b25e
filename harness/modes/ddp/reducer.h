// reducer.h — ddpbench's own DDP gradient reducer (PyTorch's reducer.hpp is not usable with
// Debian's headers, and owning it is the point: it is what gets judged). Per-parameter autograd
// hooks copy each gradient into its bucket's flat buffer as backward produces it; a full bucket
// starts its asynchronous reduction at once (buckets launch in order) while backward continues;
// finalize() waits for every bucket and writes the averaged gradients back into .grad.
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

  // Call before each synchronised backward.
  void prepare_for_backward();
  // Call after backward: waits for all reductions and writes averaged gradients into .grad.
  void finalize();

  const std::vector<std::vector<int64_t>>& buckets() const { return bucket_params_; }
  // Parameter indices in the order their hooks fired during the last backward.
  const std::vector<int64_t>& ready_order() const { return ready_order_; }
  // Bucket indices in the order they were launched during the last backward.
  const std::vector<int64_t>& launch_order() const { return launch_order_; }
  // Bucket indices launched before backward returned (i.e. overlapped with compute).
  int64_t buckets_launched_during_backward() const { return launched_in_backward_; }
  int64_t bytes_last_step() const { return bytes_last_step_; }

 private:
  struct Slot {
    int64_t bucket;
    int64_t offset;
  };
  void on_gradient(int64_t index, const at::Tensor& grad);
  void mark_ready(int64_t index);
  void launch_ready_buckets();

  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  comm::Communicator& comm_;
  ReducerOptions options_;
  std::vector<std::vector<int64_t>> bucket_params_;
  std::vector<at::Tensor> bucket_buffers_;
  std::vector<Slot> slots_;
  std::vector<unsigned> hook_handles_;

  bool sync_ = true;
  bool in_backward_ = false;
  std::vector<bool> param_ready_;
  std::vector<bool> param_used_;
  std::vector<int64_t> bucket_pending_;  // parameters still missing per bucket
  int64_t next_bucket_ = 0;
  std::vector<std::unique_ptr<PendingReduction>> pending_;
  std::vector<int64_t> ready_order_;
  std::vector<int64_t> launch_order_;
  int64_t launched_in_backward_ = 0;
  int64_t bytes_last_step_ = 0;
  GradientTap tap_;
};

}  // namespace ddpbench::modes::ddp
