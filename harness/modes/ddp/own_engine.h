// own_engine.h — what ddpbench's own engines (bucketed, naive) share, as PyTorch's Python DDP layer
// does it around its Reducer: rank 0's parameters and buffers broadcast at construction, and its
// buffers again before every synchronised forward (broadcast_buffers), by broadcast_coalesced.
#pragma once

#include "modes/ddp/ddp_engine.h"

namespace ddpbench::modes::ddp {

class OwnEngine : public DdpEngine {
 public:
  OwnEngine(torch::nn::Module& module, comm::Communicator& comm, const DdpOptions& options);

  void before_forward(bool sync, const BufferSync& sync_buffers) override;
  void after_forward(const at::Tensor& /*output*/, bool /*sync*/) override {}
  // PyTorch 1.13's DDP forward under no_grad syncs buffers only while require_forward_param_sync
  // is still set by the last training forward, i.e. on the evaluation pass's first forward.
  void before_evaluation_forward(bool first) override;
  void after_evaluation_forward(const at::Tensor& /*output*/) override {}
  void sync_buffers_as_joined(bool sync, const BufferSync& sync_buffers) override;
  void broadcast(std::vector<at::Tensor>& tensors, int root) override;

 protected:
  // What the engine does before the module's forward, once the buffers are synced.
  virtual void prepare_forward() {}

  torch::nn::Module& module_;
  comm::Communicator& comm_;
  const DdpOptions options_;
};

}  // namespace ddpbench::modes::ddp
