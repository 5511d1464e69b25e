// sync_batch_norm.cpp — see sync_batch_norm.h.
#include "modes/sync_bn/sync_batch_norm.h"

#include <torch/torch.h>

#include "modes/common/global_batch_norm.h"
#include "scenarios/models/batch_norm.h"

namespace ddpbench::modes::sync_bn {
namespace {

// The exchange over `comm`. Under the injected fault the rank still joins every collective, so
// nothing hangs, but keeps its own numbers as if the exchange had been skipped.
class CommExchange : public BatchNormExchange {
 public:
  CommExchange(comm::Communicator& comm, std::shared_ptr<SyncBnControl> control)
      : comm_(comm), control_(std::move(control)) {}

  std::vector<at::Tensor> gather_rows(const at::Tensor& local) override {
    std::vector<at::Tensor> all = comm_.allgather(local);
    if (control_->skip_exchange) return {local};
    return all;
  }

 private:
  comm::Communicator& comm_;
  std::shared_ptr<SyncBnControl> control_;
};

}  // namespace

int convert_sync_batchnorm(torch::nn::Module& model, comm::Communicator& comm,
                           std::shared_ptr<SyncBnControl> control) {
  return install_global_batch_norm(model, std::make_shared<CommExchange>(comm, std::move(control)));
}

int count_batchnorm(const torch::nn::Module& model) {
  int n = 0;
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (m->as<scenarios::models::BatchNorm2d>() != nullptr) ++n;
  }
  return n;
}

}  // namespace ddpbench::modes::sync_bn
