// distributed_model.h — DistributedDataParallel semantics around a module: rank 0's parameters
// and buffers are broadcast at construction, buffers again before every forward
// (broadcast_buffers), and gradients are averaged across ranks after backward by one of three
// engines behind one interface (ddp_engine.h): ddpbench's bucketed, overlapping Reducer; the
// naive strategy (one blocking allreduce per gradient after backward — slow and obviously
// correct, kept as a comparison point); or PyTorch's own c10d Reducer (c10d_engine.h).
#pragma once

#include <torch/nn/modules/container/any.h>

#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "modes/ddp/ddp_engine.h"
#include "modes/ddp/ddp_options.h"
#include "modes/ddp/reducer.h"

namespace ddpbench::modes::ddp {

class DistributedModel {
 public:
  DistributedModel(torch::nn::AnyModule module, comm::Communicator& comm, DdpOptions options);
  ~DistributedModel();

  at::Tensor forward(const at::Tensor& input);
  // The evaluation pass's forward (call under no_grad, module in eval mode). PyTorch 1.13's DDP
  // forward under no_grad prepares no backward and syncs buffers only while
  // require_forward_param_sync is still set by the last training forward, i.e. on the first
  // evaluation forward: `first` broadcasts rank 0's buffers then (with broadcast_buffers).
  at::Tensor evaluation_forward(const at::Tensor& input, bool first);
  // After backward: averaged gradients in .grad.
  void reduce_gradients();
  // Instead of forward, backward and reduce_gradients on a rank that has run out of batches
  // (PyTorch's Join): joins the gradient allreduces with zeros; .grad then holds what the other
  // ranks' reduction gives (their sum over the initial world size).
  void reduce_gradients_joined();

  // Off: the next forward broadcasts no buffers and its backward only accumulates local
  // gradients (what NoSync scopes); on again for the backward that reduces them.
  void set_sync(bool sync);
  bool sync() const { return sync_; }

  // Scoped no_sync(): backward inside it only accumulates local gradients.
  class NoSync {
   public:
    explicit NoSync(DistributedModel& m);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedModel& model_;
  };

  void set_gradient_tap(GradientTap tap);
  // Fault injection (`buffers` fault): this rank joins the buffer broadcast but keeps its own
  // buffers, as a rank whose broadcast result is lost would.
  void set_keep_own_buffers(bool keep) { keep_own_buffers_ = keep; }
  // Fault injection (`bucket` fault, on every rank alike): the next synchronised reduction issues
  // no allreduce for its last bucket (naive: its last parameter); c10d's engine does not take it.
  void skip_last_reduction(bool skip);
  // The rank whose buffers the next forwards start from: 0, or inside Join the highest rank
  // still training (Note [PyTorch's Join, as it runs], modes/common/joined_batch.h).
  void set_buffer_source(int rank) { buffer_source_ = rank; }
  // A joined rank, in place of its forward: the buffer broadcast the others' forwards start
  // with, received (DDP's join hook, _check_and_sync_module_buffers).
  void sync_buffers_as_joined();
  // With record on: copies of the buffers as the last forward started from (after the broadcast),
  // what every rank must agree on when buffers are broadcast. Empty before the first forward,
  // without buffers, or with record off (the default: no copies on timed steps).
  void set_record_buffers(bool record) { record_buffers_ = record; }
  const std::vector<at::Tensor>& buffers_at_last_forward() const { return buffers_at_forward_; }
  torch::nn::Module& module() { return *module_.ptr(); }
  // The parameters the engine reduces (modes/common/trained_parameters.h), in its order: what a
  // gradient tap's index counts.
  const std::vector<std::string>& reduced_names() const { return names_; }
  // ddpbench's own bucketed Reducer; nullptr for the naive strategy and c10d.
  const Reducer* reducer() const { return engine_->reducer(); }
  // The allreduces the last synchronised reduction had to issue, whatever it issued: the bucketed
  // engine's one per bucket in place, the naive strategy's one per parameter some rank used, each
  // with the used-parameter map's under find_unused_parameters, and c10d's Reducer's
  // (C10dEngine::allreduces_per_reduction) (Note [Collective accounting]).
  std::optional<int64_t> allreduces_per_reduction() const;
  // c10d's engine: its Reducer drives the backend's process group itself, past ddpbench's
  // communicator (DdpPath counts what it issued into the communicator's counts).
  bool drives_backend_directly() const { return engine_->drives_backend_directly(); }
  // Gradient buckets of the engine (the c10d Reducer's as rebuilt); 0 for the naive strategy.
  int64_t num_buckets() const;
  int64_t bytes_last_step() const;
  // Rebuilds the buckets now if the next synchronised forward would (a collective every rank
  // joins; bucketed and c10d engines), then the layout that step will reduce with, as parameter
  // indices: what a checkpoint records so that a resumed run sums in the same order. Empty for
  // the naive strategy, whose order is the parameters'.
  void settle_buckets();
  std::vector<std::vector<int64_t>> bucket_layout() const;

 private:
  // Rank 0's buffers into every rank's (DDP's buffer sync), kept as the rank's own under the
  // `buffers` fault, and recorded for the agreement check when asked.
  void sync_buffers(std::vector<at::Tensor>& buffers);

  torch::nn::AnyModule module_;
  std::vector<std::string> names_;  // the engine's, in its order (reduced_names)
  std::unique_ptr<DdpEngine> engine_;
  bool sync_ = true;
  bool keep_own_buffers_ = false;
  int buffer_source_ = 0;
  bool record_buffers_ = false;
  std::vector<at::Tensor> buffers_at_forward_;
};

}  // namespace ddpbench::modes::ddp
