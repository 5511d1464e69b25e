// c10d_engine.h — `--ddp-impl c10d`: PyTorch's own DDP engine, c10d's C++ Reducer, driven per step
// exactly as torch/nn/parallel/distributed.py of the linked libtorch drives it (1.13 and 2.x
// differ; docs/DDP_ENGINES.md). What users run on their clusters is this Reducer under a thin
// Python layer; ddpbench replaces only that layer, so its checks judge PyTorch's reduction itself.
//
// Construction (DistributedDataParallel.__init__): the parameters' shapes are verified across
// ranks, rank 0's parameters and buffers are broadcast (broadcast_coalesced, 250 MiB buckets), the
// initial buckets are computed by c10d (one bucket of everything unless unused parameters are
// searched: the Reducer rebuilds them in gradient-ready order after the first iteration), reversed,
// and handed to the Reducer with the comm hook and static graph. Per forward: prepare_for_forward,
// the bucket rebuild, the buffer broadcast while require_forward_param_sync holds, the module, then
// prepare_for_backward (with the outputs when unused parameters are searched) and, on a static
// graph's first iteration, what _DDPSink does: queue delay_all_reduce at the end of backward. The
// Reducer averages the gradients during backward and finalizes them itself, so after backward
// .grad holds the average.
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
#include "modes/ddp/ddp_engine.h"

namespace ddpbench::modes::ddp {

struct C10dEngineOptions {
  // limits.cap_given: PyTorch 2.x then makes the first bucket as large as the others
  // (bucket_bytes_cap_default is False); 1.13 keeps the 1 MiB first bucket.
  BucketLimits limits;
  CommHookKind comm_hook = CommHookKind::kAllreduce;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = false;
  bool static_graph = false;
  bool broadcast_buffers = true;
  // --resume: the buckets the checkpoint recorded (parameter indices), handed to the Reducer in
  // place of DDP's first-iteration buckets; empty: DDP's own. The Reducer still rebuilds after the
  // first iteration, in the same gradient-ready order, hence into the same layout.
  std::vector<std::vector<int64_t>> initial_buckets;
  // The bucket fault may fire (with the default allreduce only: run/fault_refusals refuses it
  // with a compression hook): the Reducer reduces through Python's allreduce_hook in C++ (divide
  // by the world size, then allreduce: the Reducer's own arithmetic), which skips the last
  // bucket's allreduce while skip_last_bucket(true) holds.
  bool bucket_fault = false;
};

class C10dEngine : public DdpEngine {
 public:
  // `comm` must be built on a c10d process group (only gloo is; resolve_run refuses the others):
  // std::logic_error otherwise.
  C10dEngine(torch::nn::Module& module, comm::Communicator& comm, C10dEngineOptions options);
  ~C10dEngine() override;
  C10dEngine(const C10dEngine&) = delete;
  C10dEngine& operator=(const C10dEngine&) = delete;

  // DDP.forward, in two halves around the module's own forward. `sync` = not inside no_sync.
  // before_forward calls `buffers_broadcast(buffers)` when this forward syncs rank 0's buffers
  // (the caller broadcasts them with broadcast, or keeps a rank's own for a fault).
  void before_forward(bool sync, const BufferSync& buffers_broadcast) override;
  void after_forward(const at::Tensor& output, bool sync) override;
  // Python DDP's forward under no_grad: the engine syncs the buffers (from rank 0) while
  // require_forward_param_sync still holds from the last training forward, i.e. on the first.
  void before_evaluation_forward(bool first) override;
  void after_evaluation_forward(const at::Tensor& output) override;
  // Nothing: the Reducer finalized the reduction itself at the end of backward (a queued autograd
  // callback), so .grad holds the average already.
  void reduce(bool /*sync*/) override {}
  // Note [A joined c10d rank]: a rank out of batches (PyTorch's Join) runs what Python's
  // _DDPJoinHook.main_hook runs in place of forward and backward: the Reducer's bucket rebuild
  // (a collective while the buckets are not yet rebuilt), then one comm hook per bucket, in the
  // Reducer's bucket order, on zeros of the bucket's shape (Reducer::get_grad_buckets with zero
  // tensors, run_comm_hook), so the others' allreduces pair up and the average stays over the
  // initial world size. The reduced buckets then become this rank's .grad for the record only:
  // Python's joined rank has left its loop and takes no step (DdpPath::steps_this_step; Note
  // [PyTorch's Join, as it runs], modes/common/joined_batch.h). Python's main hook also answers
  // the active ranks' per-forward "sync in backward?" allreduce, which this Python layer (both
  // sides of it ddpbench's) does not issue; --find-unused-parameters and --static-graph, whose
  // joined-rank collectives are not driven, are refused with Join (run/fit_checks.cpp). Inside
  // no_sync (`sync` false) nothing is reduced.
  void reduce_as_joined(bool sync) override;
  // A joined rank's first part of main_hook, before reduce_as_joined: the bucket rebuild, then
  // _check_and_sync_module_buffers (the buffers received from the rank the others broadcast
  // from, through `buffers_broadcast`) when the last forward asked for a sync, which the engine
  // itself knows (`sync` is not consulted).
  void sync_buffers_as_joined(bool sync, const BufferSync& buffers_broadcast) override;
  // Nothing: the Reducer's own no_sync is require_backward_grad_sync, given per forward.
  void set_sync(bool /*sync*/) override {}
  // Broadcasts `tensors` from `root` as DDP's _sync_module_buffers does.
  void broadcast(std::vector<at::Tensor>& tensors, int root) override;

  // A deliberate fault: `tap(index, grad)` may change parameter `index`'s gradient before the
  // Reducer reads it (a hook on the parameter, which autograd runs before accumulating).
  void set_gradient_tap(GradientTap tap) override;

  // The bucket fault (C10dEngineOptions::bucket_fault): this reduction skips the allreduce of
  // its last bucket, whose gradients stay this rank's own (divided by the world size).
  void skip_last_reduction(bool skip) override;
  // The allreduces the last synchronised reduction had to issue (Note [Collective accounting]):
  // one per bucket it reduced and, where the Reducer reduces it, the used-parameter map's.
  std::optional<int64_t> allreduces_per_reduction() const override;
  // The Reducer's buckets now (after the first iteration: as rebuilt), and their bytes.
  int64_t num_buckets() const override;
  // What the Reducer's allreduces carried: its buckets, halved by a 16-bit compression hook.
  int64_t bytes_last_step() const override;
  // What the next synchronised forward would do to the buckets, now (Reducer::rebuild_buckets:
  // a collective every rank joins, and a no-op once rebuilt); then the Reducer's buckets as
  // parameter indices, what a checkpoint records.
  void settle_buckets() override;
  std::vector<std::vector<int64_t>> bucket_layout() const override;
  // Its Reducer drives the backend's process group itself, past ddpbench's communicator (DdpPath
  // counts what it issued into the communicator's counts).
  bool drives_backend_directly() const override { return true; }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ddpbench::modes::ddp
