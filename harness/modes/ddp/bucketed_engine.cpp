// bucketed_engine.cpp — see bucketed_engine.h.
#include "modes/ddp/bucketed_engine.h"

#include <torch/torch.h>

namespace ddpbench::modes::ddp {

BucketedEngine::BucketedEngine(torch::nn::Module& module, const std::vector<std::string>& names,
                               const std::vector<at::Tensor>& params, comm::Communicator& comm,
                               const DdpOptions& options)
    : OwnEngine(module, comm, options), reducer_(names, params, comm, options.reducer) {
  if (!options.resume_buckets.empty()) reducer_.adopt_buckets(options.resume_buckets);
}

void BucketedEngine::prepare_forward() {
  if (torch::GradMode::is_enabled()) reducer_.prepare_for_forward();
  reducer_.prepare_for_backward();
}

void BucketedEngine::settle_buckets() {
  if (torch::GradMode::is_enabled()) reducer_.prepare_for_forward();
}

}  // namespace ddpbench::modes::ddp
