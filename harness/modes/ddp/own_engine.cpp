// own_engine.cpp — see own_engine.h.
#include "modes/ddp/own_engine.h"

#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"

namespace ddpbench::modes::ddp {

OwnEngine::OwnEngine(torch::nn::Module& module, comm::Communicator& comm, const DdpOptions& options)
    : module_(module), comm_(comm), options_(options) {
  // Every rank starts from rank 0's weights, as DDP's constructor does; in-place writes to
  // leaves that require grad are only allowed without grad tracking.
  torch::NoGradGuard no_grad;
  // Frozen parameters too, as DDP's _sync_module_states sends every parameter.
  std::vector<at::Tensor> state = module_.parameters();
  for (const auto& b : module_.buffers()) state.push_back(b);
  comm::broadcast_coalesced(comm_, state, 0);
}

void OwnEngine::before_forward(bool sync, const BufferSync& sync_buffers) {
  if (options_.broadcast_buffers && sync) {
    std::vector<at::Tensor> buffers = module_.buffers();
    if (!buffers.empty()) sync_buffers(buffers);
  }
  prepare_forward();
}

void OwnEngine::before_evaluation_forward(bool first) {
  if (!first || !options_.broadcast_buffers) return;
  std::vector<at::Tensor> buffers = module_.buffers();
  if (!buffers.empty()) comm::broadcast_coalesced(comm_, buffers, 0);
}

void OwnEngine::sync_buffers_as_joined(bool sync, const BufferSync& sync_buffers) {
  if (!options_.broadcast_buffers || !sync) return;
  std::vector<at::Tensor> buffers = module_.buffers();
  if (!buffers.empty()) sync_buffers(buffers);
}

void OwnEngine::broadcast(std::vector<at::Tensor>& tensors, int root) {
  comm::broadcast_coalesced(comm_, tensors, root);
}

}  // namespace ddpbench::modes::ddp
