// ddp_engine.h — the gradient-reduction engine behind DistributedModel, one implementation per
// --ddp-impl, as zero's stages are behind ZeroStage: ddpbench's bucketed, overlapping Reducer
// (bucketed_engine.h), the naive strategy (one blocking allreduce per gradient after backward,
// naive_engine.h) and PyTorch's own c10d Reducer (c10d_engine.h). An engine owns the reduction and
// how a forward prepares for it; DistributedModel keeps what every engine shares: the no_sync
// switch, which rank's buffers a forward starts from, the buffer fault and the buffers' record.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "modes/ddp/ddp_options.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::ddp {

// Broadcasts the buffers a forward starts from into `buffers` (DistributedModel::sync_buffers,
// which applies the buffer fault and keeps the record, through DdpEngine::broadcast).
using BufferSync = std::function<void(std::vector<at::Tensor>& buffers)>;

class DdpEngine {
 public:
  virtual ~DdpEngine() = default;

  // DDP.forward, in two halves around the module's forward; `sync`: outside no_sync.
  virtual void before_forward(bool sync, const BufferSync& sync_buffers) = 0;
  virtual void after_forward(const at::Tensor& output, bool sync) = 0;
  // The evaluation pass's forward (under no_grad); `first`: the pass's first forward.
  virtual void before_evaluation_forward(bool first) = 0;
  virtual void after_evaluation_forward(const at::Tensor& output) = 0;
  // After backward: the averaged gradients into .grad (nothing inside no_sync).
  virtual void reduce(bool sync) = 0;
  // A rank out of batches (PyTorch's Join), in place of forward and backward: the buffer sync the
  // others' forwards start with, then the reduction joined with zeros.
  virtual void sync_buffers_as_joined(bool sync, const BufferSync& sync_buffers) = 0;
  virtual void reduce_as_joined(bool sync) = 0;
  // no_sync's switch, for an engine that accumulates differently inside it.
  virtual void set_sync(bool sync) = 0;
  // Broadcasts `tensors` from `root` as this engine's DDP broadcasts buffers.
  virtual void broadcast(std::vector<at::Tensor>& tensors, int root) = 0;

  // Fault injection: `tap` may change a gradient before it is reduced; the next synchronised
  // reduction skips its last bucket (naive: its last parameter).
  virtual void set_gradient_tap(GradientTap tap) = 0;
  virtual void skip_last_reduction(bool skip) = 0;

  // What DistributedModel reports of the engine (distributed_model.h says what each means).
  virtual std::optional<int64_t> allreduces_per_reduction() const = 0;
  virtual int64_t num_buckets() const = 0;
  virtual int64_t bytes_last_step() const = 0;
  virtual void settle_buckets() = 0;
  virtual std::vector<std::vector<int64_t>> bucket_layout() const = 0;
  virtual const Reducer* reducer() const { return nullptr; }
  virtual bool drives_backend_directly() const { return false; }
};

// The engine `options.impl` names, reducing `params` (named `names`, in the module's trained
// order); every engine starts every rank from rank 0's parameters and buffers.
std::unique_ptr<DdpEngine> make_ddp_engine(torch::nn::Module& module,
                                           const std::vector<std::string>& names,
                                           const std::vector<at::Tensor>& params,
                                           comm::Communicator& comm, const DdpOptions& options);

}  // namespace ddpbench::modes::ddp
